// JSON-Schema validation (ajv) whose errors come out as positioned diagnostics.
// The shipped schemas come compiled by the build (./validators.ts); ajv itself
// is loaded only for a schema the build did not compile (from the sources, or
// one made at run time), since loading and compiling costs more than most
// commands spend on anything else.
import { createRequire } from 'node:module';
import type { Ajv as AjvType, ErrorObject, ValidateFunction } from 'ajv';
import type { Diagnostic } from './errors.js';
import { sha256 } from './hash.js';
import { addKeywords, AJV_OPTIONS } from './schema-setup.mjs';
import { dotted, keyPos, valuePos, type Origins, type Path } from './source.js';
import { suggestion } from './suggest.js';
import { PRECOMPILED } from './validators.js';

export type { JsonSchema } from './schema.js';
import type { JsonSchema } from './schema.js';

let ajv: AjvType | undefined;
function runtimeAjv(): AjvType {
  if (ajv) return ajv;
  // Synchronous on purpose: validation is synchronous everywhere it is called.
  const { Ajv } = createRequire(import.meta.url)('ajv') as typeof import('ajv');
  return (ajv = addKeywords(new Ajv({ ...AJV_OPTIONS })));
}

const compiled = new WeakMap<object, ValidateFunction>();

function compile(schema: JsonSchema): ValidateFunction {
  let fn = compiled.get(schema);
  if (!fn) {
    fn = precompiled(schema) ?? runtimeAjv().compile(schema);
    compiled.set(schema, fn);
  }
  return fn;
}

/** The build's validator of this schema: same `$id`, and the same text (not a variant made at run time). */
function precompiled(schema: JsonSchema): ValidateFunction | undefined {
  const id = schema.$id;
  if (typeof id !== 'string' || !Object.hasOwn(PRECOMPILED, id)) return undefined;
  const found = PRECOMPILED[id];
  return found.digest === sha256(JSON.stringify(schema)) ? found.validate : undefined;
}

/**
 * Validates `data` (modified in place: defaults are filled in) and returns
 * diagnostics located through `origins`; `base` is where `data` sits in the document.
 */
export function validateWithSchema(schema: JsonSchema, data: unknown, origins: Origins, base: Path): Diagnostic[] {
  return checkWithSchema(schema, data, origins, base).diagnostics;
}

export interface SchemaCheck {
  diagnostics: Diagnostic[];
  /**
   * Where in `data` each error ajv found lies (keys from `data`'s root), those
   * not reported as diagnostics too: a value with no error at or under its
   * path passed its part of the schema.
   */
  failed: string[][];
}

/** validateWithSchema, plus where the errors lie. */
export function checkWithSchema(schema: JsonSchema, data: unknown, origins: Origins, base: Path): SchemaCheck {
  const fn = compile(schema);
  if (fn(data)) return { diagnostics: [], failed: [] };
  const seen = new Set<string>();
  const out: Diagnostic[] = [];
  const failed: string[][] = [];
  for (const e of fn.errors ?? []) {
    failed.push(instancePath(e));
    const d = toDiagnostic(e, origins, base);
    if (!d) continue;
    const k = `${d.path}\u0000${d.message}`;
    if (seen.has(k)) continue;
    seen.add(k);
    out.push(d);
  }
  return { diagnostics: out, failed };
}

function instancePath(e: ErrorObject): string[] {
  if (!e.instancePath) return [];
  return e.instancePath
    .slice(1)
    .split('/')
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
}

function toDiagnostic(e: ErrorObject, origins: Origins, base: Path): Diagnostic | null {
  const at = [...base, ...instancePath(e)];
  switch (e.keyword) {
    case 'additionalProperties': {
      const key = String(e.params.additionalProperty);
      const path = [...at, key];
      const known = Object.keys((e.parentSchema?.properties as object | undefined) ?? {});
      const hint = known.length ? suggestion(key, known) : '';
      return { pos: keyPos(origins, path), path: dotted(path), message: `unknown key${hint}` };
    }
    case 'required':
      return {
        pos: keyPos(origins, at),
        path: dotted(at) || undefined,
        message: `missing required key "${String(e.params.missingProperty)}"`,
      };
    case 'propertyNames': {
      // ajv reports the bad name itself in a nested error; this one only repeats it.
      return null;
    }
    case 'pattern':
      if (e.propertyName !== undefined) {
        const path = [...at, e.propertyName];
        return {
          pos: keyPos(origins, path),
          path: dotted(path),
          message: `invalid name: must match ${String(e.params.pattern)}`,
        };
      }
      return { pos: valuePos(origins, at), path: dotted(at), message: `must match ${String(e.params.pattern)}` };
    case 'enum':
      return {
        pos: valuePos(origins, at),
        path: dotted(at),
        message: `must be one of: ${(e.params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}${suggestionFor(e)}`,
      };
    case 'type':
      return {
        pos: valuePos(origins, at),
        path: dotted(at),
        message: `must be ${[e.params.type].flat().join(' or ')}${listHint(e)}`,
      };
    case 'minProperties':
    case 'minItems':
      // An empty mapping or list where something must be named: say that, not ajv's count.
      if (e.params.limit === 1)
        return {
          pos: valuePos(origins, at),
          path: dotted(at),
          message: e.keyword === 'minItems' ? 'must not be empty (give at least one item)' : 'must not be empty',
        };
      return { pos: valuePos(origins, at), path: dotted(at) || undefined, message: e.message ?? 'invalid' };
    case 'if':
    case 'anyOf':
    case 'oneOf':
      return null;
    default:
      return { pos: valuePos(origins, at), path: dotted(at) || undefined, message: e.message ?? 'invalid' };
  }
}

/** A single value where a list is expected (`policies: scripted:linear`): how to write it as a list of one. */
function listHint(e: ErrorObject): string {
  if ([e.params.type].flat().join() !== 'array') return '';
  const v: unknown = e.data;
  if (typeof v !== 'string' && typeof v !== 'number' && typeof v !== 'boolean') return '';
  // Plain in a YAML flow list unless it holds what the flow syntax reads itself.
  const text =
    typeof v === 'string' && (v === '' || /[,[\]{}#&*!|>'"%@`]|: |^[-?:\s]|\s$/.test(v))
      ? JSON.stringify(v)
      : String(v);
  return ` (a list: write [${text}] for one item, or one "- item" line per item)`;
}

function suggestionFor(e: ErrorObject): string {
  const allowed = (e.params.allowedValues as unknown[]).filter((v): v is string => typeof v === 'string');
  return typeof e.data === 'string' && allowed.length ? suggestion(e.data, allowed) : '';
}

export { suggestion };
