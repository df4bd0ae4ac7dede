// Process-group termination: TERM first, KILL shortly after for whatever ignores it.
import type { ResultPromise } from 'execa';
import { gated, reapGroup } from './reaper.js';

export function killTree(pid: number | undefined, graceMs = 2000): void {
  if (!pid) return;
  const send = (sig: NodeJS.Signals) => {
    try {
      process.kill(-pid, sig);
    } catch {
      // group already gone
    }
  };
  send('SIGTERM');
  setTimeout(() => send('SIGKILL'), graceMs).unref();
}

/** Calls `fn` when `signal` aborts; returns a function that stops listening. */
export function onceAborted(signal: AbortSignal, fn: () => void): () => void {
  if (signal.aborted) {
    fn();
    return () => {};
  }
  signal.addEventListener('abort', fn, { once: true });
  return () => signal.removeEventListener('abort', fn);
}

/** SIGKILL to the whole group at once (used after the leader has exited). */
export function killGroupNow(pid: number | undefined): void {
  if (!pid) return;
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // group already gone
  }
}

/** Whether a process with this pid exists on this machine (EPERM: it does, under another user). */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Waits for `p`, at most `ms`. The timer is cleared once `p` settles: a bare race leaves it pending,
 * and a command whose work is done would then stay alive until it fires.
 */
export async function waitAtMost(p: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([p, new Promise((r) => (timer = setTimeout(r, ms)))]);
  } finally {
    clearTimeout(timer);
  }
}

export interface ServerGroup {
  /** The server's process (its output in `all`). */
  child: ResultPromise;
  /** Settles when the process has exited, however it ended. */
  exited: Promise<void>;
  /** Ends the whole group (TERM, then KILL after `graceMs`) and waits for the process. */
  stop(): Promise<void>;
}

/**
 * A long-lived server (the trainer worker, vLLM) in a process group of its own, announced to the reaper before
 * it runs (core/reaper.ts), so that it and every process it starts go with it however mlepipe ends; stop() ends
 * the group, and the reaper lets go of it once it has exited.
 */
export async function startServerGroup(
  argv: readonly string[],
  o: { cwd: string; env?: Record<string, string>; graceMs?: number },
): Promise<ServerGroup> {
  // Loaded here: commands that start no server (plan, validate) never load execa (test/e2e/startup.test.ts).
  const { execa } = await import('execa');
  const [gate, ...rest] = gated(argv);
  const child: ResultPromise = execa(gate, rest, {
    cwd: o.cwd,
    env: o.env,
    detached: true,
    reject: false,
    stdin: 'pipe',
    all: true,
    buffer: false,
  });
  const release = await reapGroup(child);
  const exited = (async () => {
    await child;
  })().catch(() => {});
  void exited.then(release);
  const stop = async () => {
    killTree(child.pid, o.graceMs);
    await exited;
  };
  return { child, exited, stop };
}
