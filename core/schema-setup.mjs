// What the schema validators are made from, shared by the build (which
// compiles them to code ahead of time, scripts/compile-schemas.mjs) and by
// core/jsonschema.ts (which compiles at run time what the build did not):
// both must use the same options and keywords, or the two would report
// different errors for the same input.

/** ajv's options. `verbose` keeps the failing data and parent schema on each error (suggestions read them). */
export const AJV_OPTIONS = Object.freeze({
  allErrors: true,
  useDefaults: true,
  verbose: true,
  strict: true,
  allowUnionTypes: true,
});

/** Keywords of our own, known to ajv but checked by the rules. */
export function addKeywords(ajv) {
  // Marks a string parameter as naming a `models:` or `rewards:` entry, so the
  // reference rules can check it without knowing the stage.
  ajv.addKeyword({ keyword: 'x-ref', schemaType: 'string' });
  return ajv;
}
