export function schemaType(schema: unknown, at?: string, opts?: { written?: boolean }): string;
export function paramsModule(): string;
export const GENERATED: string;
export function configModule(): string;
export const CONFIG_GENERATED: string;
export function generatedModules(): Array<{ file: string; text: string }>;
