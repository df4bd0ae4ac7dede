// Module hooks that let Node run the repository's TypeScript as it is, for the
// test files: `./x.js` from a .ts file finds ./x.ts, a .ts file is compiled by
// esbuild once and then read from a cache folder keyed by its path and text,
// and a JSON file imported without an attribute (what the bundler accepts) is
// a module whose default export is its value. The files keep their own URLs,
// so that paths worked out from import.meta.url are the same as in the
// sources. Without this, each test process paid tsx's start-up (its own
// bundle and an esbuild service), about 0.1 CPU-s a process before any test ran.
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

let cache;
let options;
/** What every compiled module's key starts from: the compiler's settings, which are the same for the whole process. */
let settingsHash;
let esbuild;

export function initialize(data) {
  cache = data.cache;
  options = {
    loader: 'ts',
    format: 'esm',
    target: 'node20',
    sourcemap: 'inline',
    tsconfigRaw: { compilerOptions: data.compilerOptions },
  };
  settingsHash = createHash('sha256').update(JSON.stringify(options)).digest('hex');
}

const relative = (s) => s.startsWith('./') || s.startsWith('../') || s.startsWith('/') || s.startsWith('file:');

export async function resolve(specifier, context, next) {
  if (relative(specifier) && specifier.endsWith('.js') && context.parentURL?.endsWith('.ts')) {
    const js = new URL(specifier, context.parentURL);
    const ts = new URL(js.href.slice(0, -3) + '.ts');
    if (!existsSync(js) && existsSync(ts)) return { url: ts.href, format: 'module', shortCircuit: true };
  }
  return next(specifier, context);
}

export async function load(url, context, next) {
  if (!url.startsWith('file:')) return next(url, context);
  if (url.endsWith('.json') && context.importAttributes?.type !== 'json') {
    const text = await readFile(fileURLToPath(url), 'utf8');
    return { format: 'module', source: `export default ${text.trim() || 'null'};`, shortCircuit: true };
  }
  if (!url.endsWith('.ts')) return next(url, context);
  const path = fileURLToPath(url);
  const text = await readFile(path, 'utf8');
  const key = createHash('sha256')
    .update(settingsHash)
    .update('\0')
    .update(path)
    .update('\0')
    .update(text)
    .digest('hex')
    .slice(0, 40);
  const kept = join(cache, `${key}.mjs`);
  try {
    return { format: 'module', source: await readFile(kept, 'utf8'), shortCircuit: true };
  } catch {
    // not compiled yet
  }
  esbuild ??= await import('esbuild');
  const { code } = await esbuild.transform(text, { ...options, sourcefile: path });
  // Written beside and renamed into place: two files compiling the same module at once both write whole files.
  await mkdir(cache, { recursive: true });
  const part = `${kept}.${process.pid}.${Math.random().toString(36).slice(2)}`;
  await writeFile(part, code);
  await rename(part, kept);
  return { format: 'module', source: code, shortCircuit: true };
}
