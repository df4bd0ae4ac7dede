// `mlepipe cache ls` / `cache gc`: an entry is wanted while some registered
// lock file names its key. gc never touches a key another run holds locked.
import { readdir, rm } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { dirSize, exists } from '../../core/fs.js';
import { sweepBoards } from './boards.js';
import { readLockfile } from './lockfile.js';
import type { CacheStore } from './store.js';

export interface EntryInfo {
  key: string;
  node?: string;
  kind?: string;
  bytes: number;
  finished?: string;
  /** Experiments (lock files) that reference it. */
  referencedBy: string[];
}

async function references(store: CacheStore): Promise<{ byKey: Map<string, string[]>; staleRefs: string[] }> {
  const byKey = new Map<string, string[]>();
  const staleRefs: string[] = [];
  for (const { ref, lockfile } of await store.lockfiles()) {
    const lf = lockfile ? await readLockfile(lockfile) : undefined;
    if (!lf) {
      staleRefs.push(ref);
      continue;
    }
    for (const e of Object.values(lf.nodes)) byKey.set(e.key, [...(byKey.get(e.key) ?? []), lf.experiment]);
  }
  return { byKey, staleRefs };
}

export async function listEntries(store: CacheStore): Promise<EntryInfo[]> {
  const { byKey } = await references(store);
  const out: EntryInfo[] = [];
  for (const key of await store.keys()) {
    const m = await store.manifest(key);
    out.push({
      key,
      node: m?.node,
      kind: m?.kind,
      bytes: m ? m.files.reduce((s, f) => s + f.size, 0) : await dirSize(store.entryDir(key)),
      finished: m?.finished,
      referencedBy: [...new Set(byKey.get(key) ?? [])],
    });
  }
  return out;
}

export interface GcResult {
  removed: EntryInfo[];
  kept: number;
  bytes: number;
  /** Leftovers removed besides entries: orphan checkpoints, logs, staging folders, stored parses. */
  other: string[];
}

export async function collectGarbage(store: CacheStore, dryRun: boolean): Promise<GcResult> {
  const { byKey, staleRefs } = await references(store);
  const entries = await listEntries(store);
  const removed: EntryInfo[] = [];
  const other: string[] = [];
  const drop = async (path: string) => {
    if (!dryRun) await rm(path, { recursive: true, force: true });
  };
  for (const e of entries) {
    if (byKey.has(e.key) || (await store.isLocked(e.key))) continue;
    removed.push(e);
    await drop(store.entryDir(e.key));
  }
  // Checkpoints and logs of keys that are neither wanted nor being worked on.
  for (const sub of ['items', 'logs']) {
    for (const name of await readdir(join(store.root, sub)).catch(() => [] as string[])) {
      const key = name.replace(/\.log$/, '');
      if (
        byKey.has(key) ||
        (await store.isLocked(key)) ||
        ((await exists(join(store.entryDir(key), 'manifest.json'))) && !removed.some((r) => r.key === key))
      )
        continue;
      other.push(join(sub, name));
      await drop(join(store.root, sub, name));
    }
  }
  // Base-key marks (store.sameWork) of entries that are gone: a mark says where a rescore can start.
  for (const base of await readdir(join(store.root, 'bases')).catch(() => [] as string[])) {
    const marks = await readdir(join(store.root, 'bases', base)).catch(() => [] as string[]);
    const gone = [];
    for (const key of marks)
      if (removed.some((r) => r.key === key) || !(await exists(join(store.entryDir(key), 'manifest.json'))))
        gone.push(key);
    if (gone.length === marks.length) await drop(join(store.root, 'bases', base));
    else for (const key of gone) await drop(join(store.root, 'bases', base, key));
  }
  // Staging folders left by killed runs.
  for (const dir of await store.staleStaging()) {
    other.push(relative(store.root, dir));
    await drop(dir);
  }
  for (const ref of staleRefs) await drop(ref);
  // Named links to training curves whose entries went (cache/boards.ts).
  other.push(...(await sweepBoards(store.root, dryRun)));
  // Stored parses of experiment files (pipelines/config/parsed.ts) are only a speed-up, and nothing says
  // which files still exist: they all go, and the next command parses each file it reads once more.
  const parses = await readdir(join(store.root, 'parsed')).catch(() => [] as string[]);
  if (parses.length) {
    other.push(`parsed/ (${parses.length} stored parse${parses.length === 1 ? '' : 's'})`);
    await drop(join(store.root, 'parsed'));
  }
  return { removed, kept: entries.length - removed.length, bytes: removed.reduce((s, e) => s + e.bytes, 0), other };
}
