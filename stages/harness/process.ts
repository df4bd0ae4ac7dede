// One harness process: its own process group (a timeout or a stopping node takes down all it started), its
// output appended to a log file, a time limit. Used for the harness itself and for what an adapter starts to
// read a run back (aira-dojo's final solution).
import { execa } from 'execa';
import { createWriteStream } from 'node:fs';
import { killGroupNow, killTree, onceAborted } from '../../core/proc.js';
import { gated, reapGroup } from '../../core/reaper.js';
import type { HarnessCommand, HarnessExit } from './adapter.js';

/** What a harness inherits from mlepipe's environment; the rest comes from its command. */
const KEPT_ENV = ['PATH', 'HOME', 'LANG', 'LC_ALL', 'TMPDIR', 'USER'];

export async function runHarnessProcess(
  cmd: HarnessCommand,
  opts: { timeoutMs: number; signal: AbortSignal; log: string; onLine?: (line: string) => void },
): Promise<HarnessExit> {
  const env: Record<string, string> = {};
  for (const k of KEPT_ENV) if (process.env[k] !== undefined) env[k] = process.env[k]!;
  Object.assign(env, cmd.env);
  const out = createWriteStream(opts.log, { flags: 'a' });
  const started = Date.now();
  const [gate, ...argv] = gated([...cmd.argv]);
  const child = execa(gate!, argv, {
    cwd: cmd.cwd,
    env,
    extendEnv: false,
    detached: true,
    reject: false,
    stdin: 'pipe',
    all: true,
    buffer: false,
  });
  const held = reapGroup(child);
  const lines = async () => {
    for await (const line of child.iterable({ from: 'all' })) {
      out.write(`${String(line)}\n`);
      opts.onLine?.(String(line));
    }
  };
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    killTree(child.pid);
  }, opts.timeoutMs);
  const stopAbort = onceAborted(opts.signal, () => killTree(child.pid));
  child.once('exit', () => {
    killGroupNow(child.pid);
    void held.then((release) => release());
  });
  const [result] = await Promise.all([child, lines()]);
  clearTimeout(timer);
  stopAbort();
  await new Promise<void>((done) => out.end(done));
  return {
    code: result.exitCode ?? null,
    signal: result.signal ?? null,
    timedOut,
    seconds: (Date.now() - started) / 1000,
  };
}

/** A run's failure in a line, from how its process ended; undefined when it exited 0. */
export function exitFailure(exit: HarnessExit, what: string, limitS: number): string | undefined {
  if (exit.timedOut) return `${what} timed out after ${limitS}s`;
  if (exit.signal) return `${what} was killed by ${exit.signal}`;
  if (exit.code !== 0) return `${what} exited with code ${exit.code}`;
  return undefined;
}
