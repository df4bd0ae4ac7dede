// `<experiment>.lock.json` beside the experiment file: node id → key, params,
// output summary and metrics of its last finished run. Updated after every
// node (read-modify-write under a lock), so a crash keeps what finished.
import { isObject, readJson, type Check } from '../../core/json-files.js';
import { basename, dirname, extname, join } from 'node:path';
import { writeFileAtomic } from '../../core/fs.js';
import type { Manifest } from './manifest.js';
import { waitLock } from './locks.js';

/** A lock-file entry: the manifest less its file list, plus output totals. */
export type LockEntry = Pick<
  Manifest,
  'key' | 'kind' | 'version' | 'params' | 'inputs' | 'extras' | 'variant' | 'metrics' | 'finished' | 'durationMs'
> & {
  outputs: { files: number; bytes: number };
};

export interface LockFile {
  experiment: string;
  mlepipe: string;
  nodes: Record<string, LockEntry>;
}

export function lockfilePath(experimentFile: string): string {
  const ext = extname(experimentFile);
  return join(dirname(experimentFile), `${basename(experimentFile, ext)}.lock.json`);
}

/** A lock file is an object with its nodes; anything else is read as no lock file at all. */
const lockFileShape: Check = (v) =>
  isObject(v) ?? (typeof (v as { nodes?: unknown }).nodes === 'object' ? undefined : 'no "nodes" object');

export async function readLockfile(path: string): Promise<LockFile | undefined> {
  try {
    return await readJson<LockFile>(path, lockFileShape);
  } catch {
    return undefined;
  }
}

/** Applies `change` to the lock file under a cross-process lock kept at `mutex` (in the cache, not beside the file). */
export async function updateLockfile(
  path: string,
  mutex: string,
  init: Omit<LockFile, 'nodes'>,
  change: (lf: LockFile) => void,
): Promise<void> {
  const held = await waitLock(mutex);
  try {
    const lf = (await readLockfile(path)) ?? { ...init, nodes: {} };
    lf.experiment = init.experiment;
    lf.mlepipe = init.mlepipe;
    change(lf);
    const sorted: Record<string, LockEntry> = {};
    for (const id of Object.keys(lf.nodes).sort()) sorted[id] = lf.nodes[id];
    lf.nodes = sorted;
    await writeFileAtomic(path, JSON.stringify(lf, null, 2) + '\n');
  } finally {
    await held?.release();
  }
}
