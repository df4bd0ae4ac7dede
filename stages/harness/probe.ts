// What the harness stage asks of the machine about a checkout and an interpreter: the commit a checkout is at
// (with a digest of its uncommitted changes), and which modules an interpreter cannot find.
import { execFile, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { promisify } from 'node:util';
import { sha256 } from '../../core/hash.js';

const run = promisify(execFile);

/** The checkout's HEAD and a digest of `git status` and `git diff HEAD`, or why there is none. */
export async function checkoutCommit(dir: string): Promise<Record<string, string>> {
  if (!existsSync(dir)) return { missing: dir };
  try {
    const head = (await run('git', ['-C', dir, 'rev-parse', 'HEAD'])).stdout.trim();
    const status = (await run('git', ['-C', dir, 'status', '--porcelain'], { maxBuffer: 64 << 20 })).stdout;
    if (!status.trim()) return { commit: head };
    const diff = (await run('git', ['-C', dir, 'diff', 'HEAD'], { maxBuffer: 256 << 20 })).stdout;
    return { commit: head, changes: sha256(status + '\0' + diff) };
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
