import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

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
    if (up === dir) throw new Error(`mlepipe is missing its file ${rel}`);
    dir = up;
  }
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
