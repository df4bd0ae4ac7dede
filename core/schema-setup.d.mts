import type { Ajv } from 'ajv';
export const AJV_OPTIONS: Readonly<{
  allErrors: true;
  useDefaults: true;
  verbose: true;
  strict: true;
  allowUnionTypes: true;
}>;
export function addKeywords<A extends Ajv>(ajv: A): A;
