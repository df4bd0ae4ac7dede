// Cross-process locks (proper-lockfile: a mkdir lock whose mtime is kept
// fresh while held, so it works on shared filesystems and a lock left by a
// killed process goes stale after STALE_MS).
import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';

// Loaded on first use: planning and reporting never lock.
let loaded: Promise<typeof import('proper-lockfile')> | undefined;
const lockfile = () => (loaded ??= import('proper-lockfile').then((m) => m.default));

export const STALE_MS = 5000;

export interface Held {
  release(): Promise<void>;
  /** Aborts when the lock was lost (its holder was too slow to refresh it). */
  readonly lost: AbortSignal;
}

/** Takes the lock at `path`, or returns null if another process holds it. */
export async function tryLock(path: string): Promise<Held | null> {
  await mkdir(dirname(path), { recursive: true });
  const lost = new AbortController();
  try {
    const release = await (
      await lockfile()
    ).lock(path, {
      realpath: false,
      stale: STALE_MS,
      update: 1000,
      retries: 0,
      onCompromised: (err) => lost.abort(err),
    });
    return {
      lost: lost.signal,
      release: async () => {
        await release().catch(() => {});
      },
    };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ELOCKED') return null;
    throw err;
  }
}

/** Waits for the lock, calling `onWait` once if it has to wait; gives up when `signal` aborts. */
export async function waitLock(path: string, signal?: AbortSignal, onWait?: () => void): Promise<Held | null> {
  let told = false;
  for (;;) {
    const held = await tryLock(path);
    if (held) return held;
    if (signal?.aborted) return null;
    if (!told) {
      told = true;
      onWait?.();
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}

export async function isLocked(path: string): Promise<boolean> {
  return (await lockfile()).check(path, { realpath: false, stale: STALE_MS }).catch(() => false);
}
