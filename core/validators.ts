// Validators compiled ahead of time, by schema `$id`. From the sources there
// are none (everything is compiled on first use); build.mjs bundles the code
// that scripts/compile-schemas.mjs generates in place of this module.
import type { ValidateFunction } from 'ajv';

export const PRECOMPILED: Readonly<Record<string, ValidateFunction>> = {};
