// Warm jails kept from one stage for the next within a run. A jail costs its
// interpreter and imports to start (about a CPU-second), and each stage opened
// a pool of its own: a generate → eval run started two jails for the
// generator and two more for the agents. A pool that shuts down puts its idle
// jails here (each reset and found clean, as for a session that follows
// another), and a pool that starts takes a jail of the same key before
// starting one. Only while a run holds the shelf open: outside one, pools
// close their jails as before. Closing the shelf (the run's end, however it
// ends) closes every jail on it.
import type { WarmExecutor } from './executor.js';

/** Jails kept at most: two stages' pools at the default concurrency of two, running side by side. */
const MAX_KEPT = 4;

let holders = 0;
const kept: { key: string; ex: WarmExecutor }[] = [];

/** Opens the shelf for a run; every call is matched by one `closeShelf`. */
export function openShelf(): void {
  holders++;
}

/** The run is over: once no run holds the shelf, its jails are closed. */
export async function closeShelf(): Promise<void> {
  holders = Math.max(0, holders - 1);
  if (holders === 0) await Promise.all(kept.splice(0).map((k) => k.ex.close()));
}

/** Keeps an idle jail for the next pool of `key`; false when there is no run, or no room (the caller closes it). */
export function shelve(key: string, ex: WarmExecutor): boolean {
  if (holders === 0 || kept.length >= MAX_KEPT || !ex.alive) return false;
  kept.push({ key, ex });
  return true;
}

/** A kept jail of `key`, if any is alive (dead ones found on the way are closed). */
export function unshelve(key: string): WarmExecutor | undefined {
  for (;;) {
    const i = kept.findIndex((k) => k.key === key);
    if (i < 0) return undefined;
    const [{ ex }] = kept.splice(i, 1);
    if (ex.alive) return ex;
    void ex.close();
  }
}

/** Jails on the shelf now. */
export const shelved = (): number => kept.length;
