import type { Ajv } from 'ajv';
export const AJV_OPTIONS: Readonly<{ allErrors: true; useDefaults: true; verbose: true; strict: true; allowUnionTypes: true }>;
export function addKeywords<A extends Ajv>(ajv: A): A;
export const ENTRY_SECTIONS: readonly ['stages', 'models', 'tables', 'figures'];
export function fieldSchema(rootId: string, section: string, field: string, schema: Record<string, unknown>): Record<string, unknown>;
