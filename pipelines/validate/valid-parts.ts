// The parts of an experiment that passed its schema, so the rules can run
// beside the schema's errors instead of after they are fixed. A field that
// fails its own schema is left out; an entry that is not an object or lacks
// a required field is left out whole, but its name stays known.
import experimentSchema from '../../schemas/experiment.schema.json';
import type { JsonSchema } from '../../core/jsonschema.js';
import { isPlainObject } from '../config/merge.js';
import type { WrittenExperiment } from '../config/types.js';
import type { WrittenNames } from './rules/types.js';

const SECTIONS = experimentSchema.properties as Record<string, JsonSchema>;
const ENTRY_SECTIONS = ['stages', 'models', 'tables', 'figures'] as const;

/**
 * Undefined when there is nothing the rules could safely read (no stages
 * mapping). `failed`: where the experiment schema found errors in `doc` (as
 * checkWithSchema gives them); a field passed its own schema when none lies
 * at or under it, since the whole document was checked with that same schema.
 */
export function validParts(
  doc: unknown,
  failed: readonly (readonly string[])[],
): { doc: WrittenExperiment; names: WrittenNames } | undefined {
  if (!isPlainObject(doc) || !isPlainObject(doc.stages)) return undefined;
  const keys = (v: unknown) => (isPlainObject(v) ? Object.keys(v) : []);
  const names: WrittenNames = {
    stages: keys(doc.stages),
    models: keys(doc.models),
    rewards: keys(doc.rewards),
    stageKeys: new Map(Object.entries(doc.stages).map(([id, st]) => [id, keys(st)])),
  };
  const bad = new Set(failed.filter((p) => p.length >= 3).map((p) => p.slice(0, 3).join('\u0000')));
  const out: Record<string, unknown> = { ...doc };
  for (const section of ENTRY_SECTIONS) {
    const fieldOk = (entry: string, field: string) => !bad.has([section, entry, field].join('\u0000'));
    out[section] = isPlainObject(doc[section])
      ? validEntries(doc[section], SECTIONS[section].additionalProperties as JsonSchema, fieldOk)
      : undefined;
  }
  out.rewards = isPlainObject(doc.rewards)
    ? Object.fromEntries(Object.entries(doc.rewards).filter(([, f]) => typeof f === 'string'))
    : undefined;
  return { doc: out as unknown as WrittenExperiment, names };
}

function validEntries(
  section: Record<string, unknown>,
  entry: JsonSchema,
  fieldOk: (entry: string, field: string) => boolean,
): Record<string, unknown> {
  const props = entry.properties as Record<string, JsonSchema>;
  const required = (entry.required as string[] | undefined) ?? [];
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(section)) {
    if (!isPlainObject(value)) continue;
    const kept = Object.fromEntries(Object.entries(value).filter(([k]) => props[k] && fieldOk(name, k)));
    if (required.every((k) => k in kept)) out[name] = kept;
  }
  return out;
}
