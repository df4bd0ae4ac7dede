export function compileSchemas(root: string): string;
