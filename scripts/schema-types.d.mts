export function schemaType(schema: unknown, at?: string): string;
export function paramsModule(): string;
export const GENERATED: string;
