// What the harness stage asks of the machine about a checkout and an interpreter: the commit a checkout is at
// (with a digest of its uncommitted changes), and which modules an interpreter cannot find.
import { execFile, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { promisify } from 'node:util';
import { sha256 } from '../../core/hash.js';

const run = promisify(execFile);

/**
 * The checkout's HEAD and a digest of its changes to tracked files (`git diff HEAD`), or why there is none.
 * Untracked files are left out: a harness run writes its caches into the checkout it runs in.
 */
export async function checkoutCommit(dir: string): Promise<Record<string, string>> {
  if (!existsSync(dir)) return { missing: dir };
  try {
    const head = (await run('git', ['-C', dir, 'rev-parse', 'HEAD'])).stdout.trim();
    const diff = (await run('git', ['-C', dir, 'diff', 'HEAD'], { maxBuffer: 256 << 20 })).stdout;
    return diff ? { commit: head, changes: sha256(diff) } : { commit: head };
  } catch (err) {
    return { unavailable: `not a git checkout: ${(err as Error).message.split('\n')[0]}` };
  }
}

// find_spec looks a module up without importing it: fast, and nothing of the harness runs.
const FIND =
  'import importlib.util, sys\nprint(" ".join(m for m in sys.argv[1:] if importlib.util.find_spec(m) is None))';

/** The modules `python` cannot find (all of them when it does not start). */
export function missingModules(python: string, modules: readonly string[]): string[] {
  const r = spawnSync(python, ['-c', FIND, ...modules], { encoding: 'utf8', timeout: 30_000 });
  if (r.status !== 0) return [...modules];
  return r.stdout.trim().split(/\s+/).filter(Boolean);
}
