// Loaded by test/run.mjs with --import: test files that import `uvu` get
// ./index.mjs instead, which adds what the runner needs on top of uvu.
import { register } from 'node:module';

register('./resolve.mjs', import.meta.url);
