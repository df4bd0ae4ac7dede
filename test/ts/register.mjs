// Loaded by test/run.mjs with --import: TypeScript as it is, through ./hooks.mjs.
// MLEPIPE_TEST_TS_CACHE names the folder compiled modules are kept in (the runner gives every file the same one).
import { readFileSync } from 'node:fs';
import { register } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const { compilerOptions } = JSON.parse(readFileSync(new URL('../../tsconfig.json', import.meta.url), 'utf8'));
const cache = process.env.MLEPIPE_TEST_TS_CACHE ?? join(tmpdir(), 'mlepipe-test-ts');
register('./hooks.mjs', import.meta.url, { data: { cache, compilerOptions } });
