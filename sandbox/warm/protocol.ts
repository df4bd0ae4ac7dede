// The host's side of the warm server's protocol (sandbox/py/warm.py): one
// JSON object per line each way. Requests: run (a step), kill (the running
// step, with why), reset, remove (workspace files), exit. Answers: a hello once started, then one
// object per run.
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { launcherRlimits } from '../spawn.js';
import type { Limits, Step, StepResult } from '../types.js';

export type KillReason = 'oom' | 'interrupted';

export function runRequest(step: Step, limits: Limits, countsProcesses: boolean): Record<string, unknown> {
  return {
    op: 'run',
    file: step.file,
    args: step.args ?? [],
    timeout_s: limits.timeoutMs / 1000,
    memory_mb: limits.memoryMb,
    max_output: limits.maxOutputBytes,
    rlimits: launcherRlimits(limits, countsProcesses),
  };
}

export const killRequest = (reason: KillReason) => ({ op: 'kill', reason });

/** What the server says about one step: the step's own exit, and what (if anything) stopped it. */
export interface RunAnswer extends Pick<StepResult, 'exitCode' | 'stdout' | 'stderr' | 'truncated' | 'durationMs'> {
  timedOut: boolean;
  /** Set when a kill request ended the step. */
  killed?: KillReason;
}

export function isRunAnswer(x: Record<string, unknown> | null): x is Record<string, unknown> & RunAnswer {
  return !!x && typeof x.exitCode === 'number' && typeof x.stdout === 'string' && typeof x.stderr === 'string';
}

const GAVE_UP = Symbol('gave up');

/** The server's answers, one parsed line at a time. */
export class Answers {
  private lines: AsyncIterator<string>;
  /** A read still waiting for its line: the next call takes it over, so no line is lost to a caller that gave up. */
  private pending?: Promise<string | null>;
  constructor(stdout: Readable) {
    this.lines = createInterface({ input: stdout })[Symbol.asyncIterator]();
  }

  /** The next answer; null when the stream ended, the line was not JSON, `timeoutMs` passed or `signal` aborted. */
  async next(timeoutMs: number, signal?: AbortSignal): Promise<Record<string, unknown> | null> {
    const read = (this.pending ??= this.lines.next().then((r) => (r.done ? null : r.value)));
    let timer: NodeJS.Timeout | undefined;
    let onAbort: (() => void) | undefined;
    const giveUp = new Promise<typeof GAVE_UP>((r) => {
      timer = setTimeout(() => r(GAVE_UP), timeoutMs);
      onAbort = () => r(GAVE_UP);
      signal?.addEventListener('abort', onAbort, { once: true });
      if (signal?.aborted) r(GAVE_UP);
    });
    const line = await Promise.race([read, giveUp]);
    clearTimeout(timer);
    signal?.removeEventListener('abort', onAbort!);
    if (line === GAVE_UP) return null;
    this.pending = undefined;
    if (line === null) return null;
    try {
      return JSON.parse(line) as Record<string, unknown>;
    } catch {
      return null;
    }
  }
}
