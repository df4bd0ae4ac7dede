// Bundles the CLI into one ESM file. Dependencies stay external (they are
// installed beside it); the shebang comes only from the banner so that it is
// never duplicated when a source file grows one.
import { build } from 'esbuild';
import { chmod, readFile } from 'node:fs/promises';

const pkg = JSON.parse(await readFile('package.json', 'utf8'));

const outfile = 'dist/cli.js';
await build({
  entryPoints: ['cli/bin.ts'],
  outfile,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  packages: 'external',
  sourcemap: 'linked',
  banner: { js: '#!/usr/bin/env node' },
  define: { __MLEPIPE_VERSION__: JSON.stringify(pkg.version) },
  logLevel: 'warning',
});
await chmod(outfile, 0o755);
