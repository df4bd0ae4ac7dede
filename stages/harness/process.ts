// One harness process: its own process group (a timeout or a stopping node takes down all it started), its
// output appended to a log file, a time limit. Used for the harness itself and for what an adapter starts to
// read a run back (aira-dojo's final solution).
import { createWriteStream } from 'node:fs';
import { runInGroup } from '../shared/group.js';
import type { HarnessCommand, HarnessExit } from './adapter.js';

/** How long past its own time limit a harness gets to write its results before it is stopped: a tenth, at most a minute. */
export const graceS = (limitS: number) => Math.min(60, Math.ceil(limitS / 10));

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
  const exit = await runInGroup(cmd.argv, {
    cwd: cmd.cwd,
    env,
    extendEnv: false,
    timeoutMs: opts.timeoutMs,
    signal: opts.signal,
    onLine: (line) => {
      out.write(`${line}\n`);
      opts.onLine?.(line);
    },
  });
  await new Promise<void>((done) => out.end(done));
  return {
    code: exit.exitCode ?? null,
    signal: exit.signal ?? null,
    timedOut: exit.timedOut,
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
