// The harnesses the harness stage can drive, one adapter each (adapter.ts). A name without an adapter, or
// an adapter without its name, does not build.
import type { HarnessAdapter } from './adapter.js';
import { airaDojo } from './aira-dojo/adapter.js';
import { mleDojo } from './mle-dojo/adapter.js';

export type HarnessName = 'aira-dojo' | 'mle-dojo';

export const HARNESSES = {
  'aira-dojo': airaDojo,
  'mle-dojo': mleDojo,
} as const satisfies { readonly [K in HarnessName]: HarnessAdapter };

export function harnessNames(): HarnessName[] {
  return Object.keys(HARNESSES) as HarnessName[];
}

export function getHarness(name: string): HarnessAdapter | undefined {
  return Object.hasOwn(HARNESSES, name) ? HARNESSES[name as HarnessName] : undefined;
}
