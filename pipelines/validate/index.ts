// Validation in steps: schema of the whole file → each stage's `with:` by its
// kind's schema (defaults filled in) → the rules below, on every part that
// passed the schema, so all errors come out at once.
import type { Diagnostic } from '../../core/errors.js';
import experimentSchema from '../../schemas/experiment.schema.json';
import { getStage } from '../../stages/registry.js';
import type { WrittenExperiment } from '../config/types.js';
import type { Origins } from '../../core/source.js';
import { ablateShape } from './rules/ablate.js';
import { workerModels } from './rules/models.js';
import { verlCpuModels, verlFits, verlWeights } from './rules/verl.js';
import { needsExist, noCycles } from './rules/needs.js';
import { definedRefs, knownKinds, tableSources } from './rules/references.js';
import { rewardFormulas } from './rules/rewards.js';
import { referenceJoins } from './rules/reference-joins.js';
import { inputKinds, stageChecks } from './rules/stages.js';
import type { Rule } from './rules/types.js';
import { validParts } from './valid-parts.js';
import { checkWithSchema, validateWithSchema, type JsonSchema } from '../../core/jsonschema.js';
import { isPlainObject } from '../config/merge.js';

export const RULES: readonly Rule[] = [
  knownKinds,
  needsExist,
  noCycles,
  ablateShape,
  definedRefs,
  workerModels,
  verlWeights,
  verlCpuModels,
  verlFits,
  rewardFormulas,
  tableSources,
  referenceJoins,
  stageChecks,
  inputKinds,
];

export interface Validated {
  doc: WrittenExperiment;
  params: Map<string, Record<string, unknown>>;
  diagnostics: Diagnostic[];
}

/** `experimentDir`: the experiment file's folder, against which stages check the paths in their params. */
export function validateExperiment(document: unknown, origins: Origins, experimentDir: string): Validated {
  const doc = structuredClone(document) as WrittenExperiment;
  const { diagnostics, failed } = checkWithSchema(experimentSchema, doc, origins, []);
  const params = new Map<string, Record<string, unknown>>();
  const refused = new Map<string, string[]>();
  if (typeof doc.stages !== 'object' || doc.stages === null || Array.isArray(doc.stages)) {
    return { doc, params, diagnostics: sortDiagnostics(diagnostics) };
  }
  for (const [id, st] of Object.entries(doc.stages)) {
    if (typeof st !== 'object' || st === null || typeof st.uses !== 'string') continue;
    const kind = getStage(st.uses);
    if (!kind) continue;
    const p = structuredClone(st.with ?? {});
    const errs = validateWithSchema(kind.schema, p, origins, ['stages', id, 'with']);
    diagnostics.push(...errs);
    if (!errs.length) params.set(id, p);
    const partial = errs.length ? withoutBadKeys(kind.schema, st.with, errs, `stages.${id}.with`) : undefined;
    if (partial) {
      params.set(id, partial.params);
      refused.set(id, partial.keys);
    }
  }
  // Rules read only what passed the schema: a bad `with:` key is left out of
  // the params they read, a bad entry out of every rule.
  const parts = validParts(doc, failed);
  if (parts) for (const rule of RULES) diagnostics.push(...rule({ ...parts, params, refused, origins, experimentDir }));
  return { doc, params, diagnostics: sortDiagnostics(diagnostics) };
}

/**
 * The params without the top-level keys the schema refused, when the rest is
 * valid: enough for the rules to check the other keys now rather than after
 * a fix. Never used to run anything: a refused key is an error already.
 */
function withoutBadKeys(
  schema: JsonSchema,
  written: unknown,
  errs: Diagnostic[],
  base: string,
): { params: Record<string, unknown>; keys: string[] } | undefined {
  if (!isPlainObject(written)) return undefined;
  const params = structuredClone(written);
  const keys: string[] = [];
  for (const e of errs) {
    const key = /^\.([^.[]+)/.exec((e.path ?? '').slice(base.length))?.[1];
    if (!key || !(e.path ?? '').startsWith(base)) return undefined;
    delete params[key];
    keys.push(key);
  }
  return validateWithSchema(schema, params, new Map(), []).length ? undefined : { params, keys };
}

export function sortDiagnostics(list: Diagnostic[]): Diagnostic[] {
  return [...list].sort((a, b) => {
    const fa = a.pos?.file ?? '';
    const fb = b.pos?.file ?? '';
    if (fa !== fb) return fa < fb ? -1 : 1;
    return (a.pos?.line ?? 0) - (b.pos?.line ?? 0) || (a.pos?.col ?? 0) - (b.pos?.col ?? 0);
  });
}
