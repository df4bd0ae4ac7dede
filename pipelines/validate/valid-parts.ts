// The parts of an experiment that passed its schema, so the rules can run
// beside the schema's errors instead of after they are fixed. A field that
// fails its own schema is left out; an entry that is not an object or lacks
// a required field is left out whole, but its name stays known.
import experimentSchema from '../../schemas/experiment.schema.json';
import type { JsonSchema } from '../../core/jsonschema.js';
import { validateWithSchema } from '../../core/jsonschema.js';
import { ENTRY_SECTIONS, fieldSchema } from '../../core/schema-setup.mjs';
import { isPlainObject } from '../config/merge.js';
import type { WrittenExperiment } from '../config/types.js';
import type { WrittenNames } from './rules/types.js';

const SECTIONS = experimentSchema.properties as Record<string, JsonSchema>;

/** Undefined when there is nothing the rules could safely read (no stages mapping). */
export function validParts(doc: unknown): { doc: WrittenExperiment; names: WrittenNames } | undefined {
  if (!isPlainObject(doc) || !isPlainObject(doc.stages)) return undefined;
  const keys = (v: unknown) => (isPlainObject(v) ? Object.keys(v) : []);
  const names: WrittenNames = { stages: keys(doc.stages), models: keys(doc.models), rewards: keys(doc.rewards) };
  const out: Record<string, unknown> = { ...doc };
  for (const section of ENTRY_SECTIONS) {
    out[section] = isPlainObject(doc[section]) ? validEntries(section, doc[section], SECTIONS[section].additionalProperties as JsonSchema) : undefined;
  }
  out.rewards = isPlainObject(doc.rewards) ? Object.fromEntries(Object.entries(doc.rewards).filter(([, f]) => typeof f === 'string')) : undefined;
  return { doc: out as unknown as WrittenExperiment, names };
}

function validEntries(sectionName: string, section: Record<string, unknown>, entry: JsonSchema): Record<string, unknown> {
  const props = entry.properties as Record<string, JsonSchema>;
  const required = (entry.required as string[] | undefined) ?? [];
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(section)) {
    if (!isPlainObject(value)) continue;
    const kept = Object.fromEntries(Object.entries(value).filter(([k, v]) => props[k] && fieldOk(sectionName, k, props[k], structuredClone(v))));
    if (required.every((k) => k in kept)) out[name] = kept;
  }
  return out;
}

// A field's schema, wrapped so that ajv takes it as a property; the build compiles the same wrappers.
const wrapped = new WeakMap<JsonSchema, JsonSchema>();
function fieldOk(section: string, field: string, schema: JsonSchema, value: unknown): boolean {
  let w = wrapped.get(schema);
  if (!w) wrapped.set(schema, (w = fieldSchema(experimentSchema.$id, section, field, schema)));
  return validateWithSchema(w, { v: value }, new Map(), []).length === 0;
}
