/** A JSON Schema document as loaded from schemas/ (kept loose: ajv checks it). */
export type JsonSchema = Record<string, unknown>;
