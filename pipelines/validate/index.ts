// Validation in steps: schema of the whole file → each stage's `with:` by its
// kind's schema (defaults filled in) → the rules below, all errors at once.
import type { Diagnostic } from '../../core/errors.js';
import experimentSchema from '../../schemas/experiment.schema.json';
import { getStage } from '../../stages/registry.js';
import type { Settings, WrittenExperiment } from '../config/types.js';
import type { Origins } from '../../core/source.js';
import { ablateShape } from './rules/ablate.js';
import { needsExist, noCycles } from './rules/needs.js';
import { definedRefs, knownKinds, tableSources } from './rules/references.js';
import { rewardFormulas } from './rules/rewards.js';
import type { Rule } from './rules/types.js';
import { validateWithSchema } from '../../core/jsonschema.js';

export const RULES: readonly Rule[] = [knownKinds, needsExist, noCycles, ablateShape, definedRefs, rewardFormulas, tableSources];

export interface Validated {
  doc: WrittenExperiment;
  params: Map<string, Record<string, unknown>>;
  diagnostics: Diagnostic[];
}

export function validateExperiment(document: unknown, origins: Origins, settings: Settings): Validated {
  const doc = structuredClone(document) as WrittenExperiment;
  const diagnostics = validateWithSchema(experimentSchema, doc, origins, []);
  const shapeOk = diagnostics.length === 0;
  const params = new Map<string, Record<string, unknown>>();
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
  }
  // Rules assume the shape the experiment schema guarantees; a bad `with:`
  // only keeps that stage out of the rules that read params.
  if (shapeOk) for (const rule of RULES) diagnostics.push(...rule({ doc, params, origins, settings }));
  return { doc, params, diagnostics: sortDiagnostics(diagnostics) };
}

function sortDiagnostics(list: Diagnostic[]): Diagnostic[] {
  return [...list].sort((a, b) => {
    const fa = a.pos?.file ?? '';
    const fb = b.pos?.file ?? '';
    if (fa !== fb) return fa < fb ? -1 : 1;
    return (a.pos?.line ?? 0) - (b.pos?.line ?? 0) || (a.pos?.col ?? 0) - (b.pos?.col ?? 0);
  });
}
