import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { listFiles } from './fs.js';
import { canonicalJson, sha256 } from './hash.js';
import { InternalError } from './errors.js';

/**
 * A file shipped beside the code (Python helpers, schemas). Found by walking up
 * from this module, so it resolves both from the sources and from dist/cli.js.
 */
export function assetPath(rel: string): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const p = join(dir, rel);
    if (existsSync(p)) return p;
    const up = dirname(dir);
    if (up === dir) throw new InternalError(`mlepipe is missing its file ${rel}`);
    dir = up;
  }
}

/** The mlepipe package's root (where its package.json is), from the sources and from dist/cli.js alike, whatever the cwd. */
export function packageRoot(): string {
  return dirname(assetPath('package.json'));
}

const cache = new Map<string, string>();
export function assetText(rel: string): string {
  let t = cache.get(rel);
  if (t === undefined) {
    t = readFileSync(assetPath(rel), 'utf8');
    cache.set(rel, t);
  }
  return t;
}

/**
 * Digest of shipped folders (Python code, catalogs, prompt templates) for node
 * keys: a change to any file in them changes the nodes that use them.
 * TypeScript sources are left out: the stage version covers code changes.
 */
export async function assetsDigest(dirs: readonly string[]): Promise<string> {
  const parts = [];
  for (const dir of dirs) parts.push(await listFiles(assetPath(dir), (rel) => rel.endsWith('.ts')));
  return sha256(canonicalJson(parts));
}
