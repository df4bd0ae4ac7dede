// Whether a cache entry still holds what its manifest says. The quick check
// (every plan and run) only stats: each listed file present with its recorded
// size and mtime; a file is hashed only where its mtime disagrees or was never
// recorded. The full check (`cache verify`) hashes every file and also looks
// for files the manifest does not list.
import { lstatSync, type Stats } from 'node:fs';
import { lstat, readFile } from 'node:fs/promises';
import { isAbsolute, join, posix } from 'node:path';
import { UserError } from '../../core/errors.js';
import { dirSize, relativeFiles, type FileEntry } from '../../core/fs.js';
import { hashFile } from '../../core/hash.js';
import type { Check } from '../../core/json-files.js';
import { tryLock } from './locks.js';
import type { Manifest } from './manifest.js';
import type { CacheStore } from './store.js';

export type EntryCheck =
  { state: 'absent' } | { state: 'ok'; manifest: Manifest } | { state: 'damaged'; problems: string[] };

export async function checkEntry(dir: string, key: string, full = false): Promise<EntryCheck> {
  let text: string;
  try {
    text = await readFile(join(dir, 'manifest.json'), 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT')
      return { state: 'damaged', problems: [`manifest.json unreadable (${(err as Error).message})`] };
    // Entries are published with their manifest by one rename: a folder without one is damaged, not absent.
    return (await lstat(dir).catch(() => null))
      ? { state: 'damaged', problems: ['manifest.json missing'] }
      : { state: 'absent' };
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return { state: 'damaged', problems: [`manifest.json unreadable (${(err as Error).message})`] };
  }
  const refused = manifestProblem(value);
  if (refused) return { state: 'damaged', problems: [`manifest.json unreadable (${refused})`] };
  const manifest = value as Manifest;
  if (manifest.key !== key) return { state: 'damaged', problems: ['manifest.json is for another key'] };

  const problems: string[] = [];
  for (const f of manifest.files) {
    const problem = await checkFile(join(dir, f.path), f, full);
    if (problem) problems.push(`${f.path} ${problem}`);
  }
  if (full) {
    const listed = new Set(manifest.files.map((f) => f.path).concat('manifest.json'));
    for (const rel of await relativeFiles(dir)) if (!listed.has(rel)) problems.push(`${rel} not in the manifest`);
  }
  return problems.length ? { state: 'damaged', problems } : { state: 'ok', manifest };
}

function lstatOrNull(path: string): Stats | null {
  try {
    return lstatSync(path);
  } catch {
    return null;
  }
}

async function checkFile(path: string, f: FileEntry, full: boolean): Promise<'missing' | 'changed' | undefined> {
  // Synchronous: an awaited lstat costs about 35 µs of CPU in libuv's thread pool hand-offs, ten times the call
  // itself, and every plan, run and outputs stats each file of the entries it looks at (thousands in a task suite).
  const st = lstatOrNull(path);
  if (!st) return 'missing';
  if (!st.isFile() || st.size !== f.size) return 'changed';
  if (!full && f.mtimeMs === st.mtimeMs) return undefined;
  return (await hashFile(path).catch(() => '')) === f.sha256 ? undefined : 'changed';
}

/** A manifest as written by a run: anything else (truncated, hand-edited, paths leaving the entry) is refused. */
const manifestProblem: Check = (value) => {
  const m = value as Partial<Manifest> | null;
  if (typeof m !== 'object' || m === null || typeof m.key !== 'string' || !Array.isArray(m.files))
    return 'not a manifest';
  for (const f of m.files as unknown[]) {
    const e = f as Partial<FileEntry> | null;
    if (
      typeof e?.path !== 'string' ||
      typeof e.size !== 'number' ||
      typeof e.sha256 !== 'string' ||
      (e.mtimeMs !== undefined && typeof e.mtimeMs !== 'number')
    ) {
      return 'a file record is malformed';
    }
    if (!e.path || isAbsolute(e.path) || posix.normalize(e.path) !== e.path || e.path.split('/').includes('..'))
      return `file path ${JSON.stringify(e.path)} leaves the entry`;
  }
  return undefined;
};

/** One line for plan, status and run: `damaged: out.txt changed, b.csv missing and 2 more`. */
export function damageReason(problems: readonly string[], shown = 3): string {
  const head = problems.slice(0, shown).join(', ');
  return `damaged: ${head}${problems.length > shown ? ` and ${problems.length - shown} more` : ''}`;
}

export interface VerifiedEntry {
  key: string;
  node?: string;
  state: 'ok' | 'damaged';
  problems: string[];
  bytes: number;
  /** With repair: removed, or kept because a run held its key (it is probably rebuilding it). */
  removed?: boolean;
  busy?: boolean;
}

/** `mlepipe cache verify`: the full check of the given entries (default: all); with repair, damaged ones are removed. */
export async function verifyCache(
  store: CacheStore,
  keys: readonly string[] | undefined,
  repair: boolean,
): Promise<VerifiedEntry[]> {
  const out: VerifiedEntry[] = [];
  for (const key of keys ?? (await store.keys())) {
    const c = await store.check(key, true);
    if (c.state === 'absent') continue; // removed meanwhile (gc, a forced rerun replacing it)
    const m = c.state === 'ok' ? c.manifest : await store.manifest(key);
    const e: VerifiedEntry = {
      key,
      node: m?.node,
      state: c.state,
      problems: c.state === 'damaged' ? c.problems : [],
      bytes: await dirSize(store.entryDir(key)),
    };
    if (repair && e.state === 'damaged') {
      const held = await tryLock(store.lockPath(key));
      if (!held) e.busy = true;
      else {
        try {
          // Looked at again under the lock: a run may have replaced it meanwhile.
          if ((await store.check(key, true)).state === 'damaged') await store.remove(key);
          e.removed = true;
        } finally {
          await held.release();
        }
      }
    }
    out.push(e);
  }
  return out;
}

/** Full keys for what the user typed (a key or an unambiguous prefix, as `cache ls` shows them). */
export async function resolveKeys(store: CacheStore, given: readonly string[]): Promise<string[]> {
  const all = await store.keys();
  return given.map((g) => {
    const hits = all.filter((k) => k.startsWith(g.toLowerCase()));
    if (hits.length === 1) return hits[0];
    throw new UserError(
      hits.length
        ? `${g}: matches ${hits.length} cache entries; give more of the key`
        : `${g}: no such cache entry in ${store.root} (mlepipe cache ls lists them)`,
    );
  });
}
