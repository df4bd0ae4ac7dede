// The esbuild bundle of the CLI, shared by build.mjs and the engine benchmark
// (which also builds the one-file layout to compare start-up times).
//
// By default the entry is dist/cli.js and what only some commands use sits in
// chunks under dist/chunks/ that those commands import when they run (code
// splitting), so `--version` or `plan` do not load the sandbox, the stages'
// code or listr2. In one file, esbuild defers running a lazily imported
// module's code, but every package it imports is still loaded at start-up.
// Dependencies stay external (they are installed beside the bundle). The JSON
// Schemas are compiled to code here, once, instead of in every process. The
// shebang comes only from the banner so that it is never duplicated when a
// source file grows one.
import { build } from 'esbuild';
import { chmod, readFile, rm } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { compileSchemas } from './compile-schemas.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

// core/validators.ts is empty in the sources; the bundle gets the compiled validators instead.
const validators = {
  name: 'precompiled-validators',
  setup(b) {
    b.onResolve({ filter: /^\.\/validators\.js$/ }, (args) =>
      args.importer === join(root, 'core', 'jsonschema.ts')
        ? { path: 'validators', namespace: 'precompiled' }
        : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'precompiled' }, () => ({
      contents: compileSchemas(root),
      loader: 'js',
      resolveDir: root,
    }));
  },
};

/** Builds the CLI into `outdir` (emptied first); `splitting: false` gives one file. Returns the entry's path. */
export async function bundle({ outdir = join(root, 'dist'), splitting = true } = {}) {
  const pkg = JSON.parse(await readFile(join(root, 'package.json'), 'utf8'));
  await rm(outdir, { recursive: true, force: true });
  await build({
    entryPoints: { cli: join(root, 'cli', 'bin.ts') },
    outdir,
    chunkNames: 'chunks/[name]-[hash]',
    splitting,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    sourcemap: 'linked',
    banner: { js: '#!/usr/bin/env node' },
    define: { __MLEPIPE_VERSION__: JSON.stringify(pkg.version) },
    plugins: [validators],
    logLevel: 'warning',
  });
  // The HTML report's page script (and its styles): browser code with Vega, vega-embed and
  // highlight.js in one file, which `mlepipe report --html` inlines in the page.
  await build({
    entryPoints: { viewer: join(root, 'pipelines', 'report', 'html', 'viewer', 'main.ts') },
    outdir: join(outdir, 'report'),
    bundle: true,
    minify: true,
    platform: 'browser',
    format: 'iife',
    target: 'es2022',
    legalComments: 'none',
    logLevel: 'warning',
  });
  const entry = join(outdir, 'cli.js');
  await chmod(entry, 0o755);
  return entry;
}
