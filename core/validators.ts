// Validators compiled ahead of time, by schema `$id`. From the sources there
// are none (everything is compiled on first use); build.mjs bundles the code
// that scripts/compile-schemas.mjs generates in place of this module.
import type { ValidateFunction } from 'ajv';

/** `digest`: sha256 of the JSON text of the schema the validator was made from. */
export const PRECOMPILED: Readonly<Record<string, { readonly digest: string; readonly validate: ValidateFunction }>> =
  {};
