// The content-addressed cache: <root>/nodes/<key>/ holds a node's outputs and
// manifest.json. Entries are built in <root>/tmp/ and renamed into place, so
// a crash never leaves half an entry, and a finished entry is never rewritten.
import { randomBytes } from 'node:crypto';
import { mkdir, readdir, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { exists, writeFileAtomic } from '../../core/fs.js';
import { readJson } from '../../core/json-files.js';
import { sha256 } from '../../core/hash.js';
import { pidAlive } from '../../core/proc.js';
import type { ItemStore } from '../../stages/contract.js';
import { itemStore } from './items.js';
import { isLocked, waitLock, type Held } from './locks.js';
import type { Manifest } from './manifest.js';
import { checkEntry, type EntryCheck } from './verify.js';

export class CacheStore {
  constructor(readonly root: string) {}

  entryDir(key: string): string {
    return join(this.root, 'nodes', key);
  }

  /** An entry exists once its manifest is in place (the rename publishes both at once). */
  has(key: string): Promise<boolean> {
    return exists(join(this.entryDir(key), 'manifest.json'));
  }

  /** Absent, whole, or damaged (see verify.ts): the quick check unless `full`. Only a whole entry may be served. */
  check(key: string, full = false): Promise<EntryCheck> {
    return checkEntry(this.entryDir(key), key, full);
  }

  /**
   * The keys with a folder under nodes/ (whole, damaged or not yet published),
   * from one listing: a key not in it is absent without looking. Undefined
   * when the folder cannot be read (each key is then checked on its own).
   */
  async listed(): Promise<Set<string> | undefined> {
    try {
      return new Set(await readdir(join(this.root, 'nodes')));
    } catch (err) {
      return (err as NodeJS.ErrnoException).code === 'ENOENT' ? new Set() : undefined;
    }
  }

  async manifest(key: string): Promise<Manifest | undefined> {
    try {
      return await readJson<Manifest>(join(this.entryDir(key), 'manifest.json'));
    } catch {
      return undefined;
    }
  }

  /** A fresh private folder to build an entry in. */
  async staging(key: string): Promise<string> {
    const dir = join(this.root, 'tmp', `${key}.${process.pid}.${randomBytes(4).toString('hex')}`);
    await mkdir(dir, { recursive: true });
    return dir;
  }

  /** Writes the manifest into the staged folder and publishes it as the entry for its key. */
  async commit(staged: string, manifest: Manifest): Promise<void> {
    await writeFileAtomic(join(staged, 'manifest.json'), JSON.stringify(manifest, null, 2) + '\n');
    await mkdir(join(this.root, 'nodes'), { recursive: true });
    try {
      await rename(staged, this.entryDir(manifest.key));
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'ENOTEMPTY' && code !== 'EEXIST') throw err;
      // The same key was published by another run meanwhile: keys are content addresses, so theirs is ours.
      await rm(staged, { recursive: true, force: true });
    }
    // An empty file per entry under its base key: how a node that differs only in post-hoc params finds it.
    if (manifest.baseKey) await writeFileAtomic(join(this.root, 'bases', manifest.baseKey, manifest.key), '');
  }

  /** Keys published under a base key (stages.rescore), oldest first; their entries may have gone since. */
  async sameWork(baseKey: string): Promise<string[]> {
    const dir = join(this.root, 'bases', baseKey);
    const names = (await readdir(dir).catch(() => [] as string[])).filter((k) => /^[0-9a-f]{64}$/.test(k));
    const dated = await Promise.all(
      names.map(async (k) => ({ k, t: (await stat(join(dir, k)).catch(() => undefined))?.mtimeMs ?? 0 })),
    );
    return dated.sort((a, b) => a.t - b.t || a.k.localeCompare(b.k)).map((d) => d.k);
  }

  /** Like commit, but a forced rerun (or the rebuild of a damaged entry) replaces an existing entry. */
  async replace(staged: string, manifest: Manifest): Promise<void> {
    await this.remove(manifest.key);
    await this.commit(staged, manifest);
  }

  /** Moves an entry aside, then deletes it, so that nobody ever sees it half removed. Call with its key locked. */
  async remove(key: string): Promise<void> {
    const entry = this.entryDir(key);
    if (!(await exists(entry))) return;
    // Named like a staging folder (key.pid.…), so that a sweep knows whose it is if this process dies mid-way.
    const trash = join(this.root, 'tmp', `${key}.${process.pid}.${randomBytes(4).toString('hex')}.old`);
    await mkdir(join(this.root, 'tmp'), { recursive: true });
    await rename(entry, trash).catch(() => {});
    await rm(trash, { recursive: true, force: true });
  }

  discard(staged: string): Promise<void> {
    return rm(staged, { recursive: true, force: true });
  }

  /**
   * Folders under tmp/ left by runs that died (kill -9, power loss): their
   * owner pid (`<key>.<pid>.…`) is gone and nobody holds their key — except
   * `heldKey`, which the caller holds, so its folders only need a dead owner.
   * The lock matters where the cache is shared between machines (pids mean nothing there).
   */
  async staleStaging(heldKey?: string): Promise<string[]> {
    const out: string[] = [];
    for (const name of (await readdir(join(this.root, 'tmp')).catch(() => [] as string[])).sort()) {
      const [key, owner] = name.split('.');
      if (heldKey !== undefined && key !== heldKey) continue;
      if (/^\d+$/.test(owner ?? '') && pidAlive(Number(owner))) continue;
      if (key !== heldKey && (await this.isLocked(key))) continue;
      out.push(join(this.root, 'tmp', name));
    }
    return out;
  }

  /** Removes what staleStaging finds; returns it. */
  async sweepStaging(heldKey?: string): Promise<string[]> {
    const stale = await this.staleStaging(heldKey);
    for (const dir of stale) await this.discard(dir);
    return stale;
  }

  lockPath(key: string): string {
    return join(this.root, 'locks', key);
  }

  /** Holds a key so that no other run works on it; waits if one does. */
  lock(key: string, signal?: AbortSignal, onWait?: () => void): Promise<Held | null> {
    return waitLock(this.lockPath(key), signal, onWait);
  }

  isLocked(key: string): Promise<boolean> {
    return isLocked(this.lockPath(key));
  }

  items(key: string): ItemStore {
    return itemStore(join(this.root, 'items', key));
  }

  logPath(key: string): string {
    return join(this.root, 'logs', `${key}.log`);
  }

  /** Remembers a lock file so `cache gc` knows which entries are still wanted. */
  async registerLockfile(lockfilePath: string): Promise<void> {
    const ref = join(this.root, 'refs', `${sha256(lockfilePath).slice(0, 24)}.json`);
    if (!(await exists(ref))) await writeFileAtomic(ref, JSON.stringify({ lockfile: lockfilePath }) + '\n');
  }

  async lockfiles(): Promise<{ ref: string; lockfile: string }[]> {
    const dir = join(this.root, 'refs');
    const out: { ref: string; lockfile: string }[] = [];
    for (const name of await readdir(dir).catch(() => [] as string[])) {
      try {
        const { lockfile } = await readJson<{ lockfile: string }>(join(dir, name));
        out.push({ ref: join(dir, name), lockfile });
      } catch {
        // unreadable ref: ignored (gc drops it)
        out.push({ ref: join(dir, name), lockfile: '' });
      }
    }
    return out;
  }

  async keys(): Promise<string[]> {
    return (await readdir(join(this.root, 'nodes')).catch(() => [] as string[]))
      .filter((k) => /^[0-9a-f]{64}$/.test(k))
      .sort();
  }

  async size(key: string): Promise<number> {
    const m = await this.manifest(key);
    return m ? m.files.reduce((s, f) => s + f.size, 0) : 0;
  }

  async mtime(key: string): Promise<Date | undefined> {
    return (await stat(this.entryDir(key)).catch(() => undefined))?.mtime;
  }
}
