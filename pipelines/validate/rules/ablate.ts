import type { Diagnostic } from '../../../core/errors.js';
import { getStage } from '../../../stages/registry.js';
import { getPath, isPlainObject, setPath } from '../../config/merge.js';
import { dotted, keyPos, valuePos } from '../../../core/source.js';
import { suggestion, validateWithSchema, type JsonSchema } from '../../../core/jsonschema.js';
import { variantLabel } from '../../../stages/ablate/index.js';
import { checkContext, followsFromRefused, overlaps } from './stages.js';
import { stageEntries, type Rule, type RuleInput } from './types.js';
import type { WrittenStage } from '../../config/types.js';
import experimentSchema from '../../../schemas/experiment.schema.json';

const STAGE_FIELDS = (experimentSchema.properties.stages.additionalProperties as JsonSchema).properties as object;

type At = (...p: (string | number)[]) => (string | number)[];

/**
 * `target:`/`matrix:` belong to ablate stages only; the target must be a
 * plain stage; each matrix key must be a parameter of the target; and every
 * value must be valid there (checked by the target's own schema).
 */
export const ablateShape: Rule = (input) => {
  const out: Diagnostic[] = [];
  for (const [id, st] of stageEntries(input.doc)) {
    const at: At = (...p) => ['stages', id, ...p];
    if (st.uses !== 'ablate') {
      for (const k of ['target', 'matrix'] as const) {
        if (st[k] !== undefined)
          out.push({
            pos: keyPos(input.origins, at(k)),
            path: dotted(at(k)),
            message: `only ablate stages take ${k}:`,
          });
      }
      continue;
    }
    out.push(...ablateStage(input, st, at));
  }
  return out;
};

/** One ablate stage: its keys, its target, and each key of its matrix. */
function ablateStage(input: RuleInput, st: WrittenStage, at: At): Diagnostic[] {
  const { doc, origins } = input;
  const names = input.names.stages;
  const out: Diagnostic[] = [];
  if (st.needs !== undefined) {
    out.push({
      pos: keyPos(origins, at('needs')),
      path: dotted(at('needs')),
      message: 'an ablate stage takes target:, not needs:',
    });
  }
  for (const k of ['target', 'matrix'] as const) {
    if (st[k] === undefined && !reportedBySchema(input, at()[1] as string, k))
      out.push({ pos: keyPos(origins, at()), path: dotted(at()), message: `missing required key "${k}"` });
  }
  if (st.target === undefined) return out;
  const target = doc.stages[st.target];
  if (!names.includes(st.target)) {
    out.push({
      pos: valuePos(origins, at('target')),
      path: dotted(at('target')),
      message: `no stage named "${st.target}"${suggestion(st.target, names)}`,
    });
    return out;
  }
  // A target the schema refused is reported there.
  if (!target) return out;
  if (target.uses === 'ablate') {
    out.push({
      pos: valuePos(origins, at('target')),
      path: dotted(at('target')),
      message: 'the target of an ablation cannot be another ablate stage',
    });
    return out;
  }
  const kind = getStage(target.uses);
  const targetParams = input.params.get(st.target);
  if (!kind || !targetParams || !st.matrix) return out;
  const axis = { input, at, name: st.target, uses: target.uses, kind, params: targetParams };
  for (const [key, values] of Object.entries(st.matrix)) out.push(...matrixKey(axis, key, values));
  return out;
}

/**
 * The schema already reported `key` of this stage: written but refused (an empty matrix), or misspelled,
 * so that an unknown key's "did you mean" names it. Either way "missing" would be a second, false error.
 */
function reportedBySchema(input: RuleInput, id: string, key: string): boolean {
  const written = input.names.stageKeys.get(id) ?? [];
  if (written.includes(key)) return true;
  return written.some((w) => !(w in STAGE_FIELDS) && suggestion(w, Object.keys(STAGE_FIELDS)).includes(`"${key}"`));
}

/** What a matrix key is checked against: the target stage, its kind and its params. */
interface Axis {
  input: RuleInput;
  at: At;
  name: string;
  uses: string;
  kind: NonNullable<ReturnType<typeof getStage>>;
  params: Record<string, unknown>;
}

/** One key of the matrix: a parameter of the target, each value valid there and giving a distinct node id. */
function matrixKey({ input, at, name, uses, kind, params }: Axis, key: string, values: unknown[]): Diagnostic[] {
  const { origins } = input;
  const keyPath = key.split('.');
  if (!paramExists(kind.schema, params, keyPath)) {
    const known = Object.keys((kind.schema.properties as object | undefined) ?? {});
    return [
      {
        pos: keyPos(origins, at('matrix', key)),
        path: dotted(at('matrix', key)),
        message: `stage "${name}" (${uses}) has no parameter "${key}"${suggestion(keyPath[0], known)}`,
      },
    ];
  }
  const out: Diagnostic[] = [];
  const labels = new Map<string, number>();
  values.forEach((v, i) => {
    const trial = structuredClone(params);
    setPath(trial, keyPath, structuredClone(v));
    const errs = validateWithSchema(kind.schema, trial, new Map(), []);
    if (errs.length) {
      out.push({
        pos: valuePos(origins, at('matrix', key, i)),
        path: dotted(at('matrix', key, i)),
        message: `invalid value for ${name}.with.${key}: ${errs[0].message}`,
      });
      return;
    }
    // The target's own checks, for the problems this value causes.
    for (const issue of kind.check?.(trial, checkContext(input)) ?? []) {
      if (!overlaps(issue.param, keyPath) || followsFromRefused(issue, input.refused.get(name))) continue;
      const path = at('matrix', key, i, ...issue.param.slice(keyPath.length));
      out.push({
        pos: valuePos(origins, path),
        path: dotted(path),
        message: `invalid value for ${name}.with.${dotted(issue.param)}: ${issue.message}`,
      });
    }
    // Node ids come from the values' spelling: two that read the same would collide.
    const label = variantLabel({ [key]: v });
    const first = labels.get(label);
    if (first === undefined) labels.set(label, i);
    else {
      out.push({
        pos: valuePos(origins, at('matrix', key, i)),
        path: dotted(at('matrix', key, i)),
        message: `gives the same node id as ${key}[${first}] (${name}@${label}): give the values distinct spellings`,
      });
    }
  });
  return out;
}

/** A path exists if the params hold it or the schema declares it (free-form objects accept any sub-path). */
function paramExists(schema: JsonSchema, data: unknown, path: string[]): boolean {
  if (getPath(data, path) !== undefined) return true;
  let s: JsonSchema | undefined = schema;
  for (const part of path) {
    if (!s) return false;
    const props = s.properties as Record<string, JsonSchema> | undefined;
    if (props && part in props) {
      s = props[part];
      continue;
    }
    if (s.additionalProperties === false) return false;
    if (isPlainObject(s.additionalProperties)) {
      s = s.additionalProperties as JsonSchema;
      continue;
    }
    return s.type === 'object' || props === undefined;
  }
  return true;
}
