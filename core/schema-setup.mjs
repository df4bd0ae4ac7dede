// What the schema validators are made from, shared by the build (which
// compiles them to code ahead of time, scripts/compile-schemas.mjs) and by
// core/jsonschema.ts (which compiles at run time what the build did not):
// both must use the same options, keywords and schema shapes, or the two
// would report different errors for the same input.

/** ajv's options. `verbose` keeps the failing data and parent schema on each error (suggestions read them). */
export const AJV_OPTIONS = Object.freeze({ allErrors: true, useDefaults: true, verbose: true, strict: true, allowUnionTypes: true });

/** Keywords of our own, known to ajv but checked by the rules. */
export function addKeywords(ajv) {
  // Marks a string parameter as naming a `models:` or `rewards:` entry, so the
  // reference rules can check it without knowing the stage.
  ajv.addKeyword({ keyword: 'x-ref', schemaType: 'string' });
  return ajv;
}

/** Sections of an experiment whose entries are checked field by field (pipelines/validate/valid-parts.ts). */
export const ENTRY_SECTIONS = Object.freeze(['stages', 'models', 'tables', 'figures']);

/**
 * One field of an entry's schema, wrapped so that ajv takes it as a property
 * (a default at a schema's root is refused). The `$id` names it, so that the
 * build can compile it ahead of time and the run finds it by that name.
 */
export function fieldSchema(rootId, section, field, schema) {
  return { $id: `${rootId}/field/${section}/${field}`, type: 'object', properties: { v: schema } };
}
