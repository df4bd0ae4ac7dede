// `npm run build`: the CLI bundled into dist/ (dist/cli.js and its chunks;
// scripts/bundle.mjs says how).
import { bundle } from './scripts/bundle.mjs';

await bundle();
