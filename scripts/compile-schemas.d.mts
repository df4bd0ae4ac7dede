export function compileSchemas(root: string): string;
export function schemaDigest(schema: unknown): string;
