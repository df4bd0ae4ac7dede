// What every backend reports the same way when a limit ended or marked a step.
import { dirSize } from '../core/fs.js';
import type { Limits, StepResult } from './types.js';

export const MB = 1024 * 1024;

/** What ended a step besides the step itself, as seen by whoever ran it. */
export interface Ending {
  /** The step was still running at its timeout and was killed. */
  timedOut?: boolean;
  /** The kernel's OOM killer struck inside the step's cgroup or container (the step was then stopped). */
  oomKilled?: boolean;
  /** The step was stopped because its session's signal aborted. */
  interrupted?: boolean;
}

/**
 * The first reason to stop a step wins: `stop(why)` records it and calls `kill` once; later reasons (the
 * timeout firing while an interrupt is being handled) change nothing.
 */
export function stopper(kill: () => void): { end: Ending; stop(why: keyof Ending): void } {
  const end: Ending = {};
  return {
    end,
    stop(why) {
      if (end.timedOut || end.oomKilled || end.interrupted) return;
      end[why] = true;
      kill();
    },
  };
}

/** Lines appended to stderr when a limit or an interrupt ended the step. */
export function limitNotes(limits: Limits, hit: { oom?: boolean; timedOut?: boolean; interrupted?: boolean }): string {
  let s = '';
  if (hit.interrupted) s += '\n[mlepipe: the step was stopped: the run was interrupted]';
  if (hit.oom)
    s += `\n[mlepipe: the step ran out of memory: it went over its memory cap of ${limits.memoryMb} MB and was stopped]`;
  if (hit.timedOut) s += `\n[mlepipe: the step was killed after its timeout of ${limits.timeoutMs / 1000} s]`;
  return s;
}

/**
 * True when Python ended the step with an uncaught MemoryError (numpy's _ArrayMemoryError included):
 * the per-process address-space cap refused an allocation. The traceback's last line names it.
 */
export function uncaughtMemoryError(exitCode: number, stderr: string): boolean {
  if (exitCode === 0) return false;
  const last = stderr.trimEnd().split('\n').pop() ?? '';
  return /^(?:[\w.]+\.)?_?\w*MemoryError\b/.test(last);
}

/** The exit code a step reports when an interrupt stopped it (as a shell reports SIGINT). */
export const INTERRUPTED_EXIT = 130;

/**
 * One StepResult from what a backend saw: an interrupt wins over running out of memory, which wins over
 * the timeout (a step stopped for its memory is not also reported as timed out).
 */
export function finishStep(
  raw: Pick<StepResult, 'exitCode' | 'stdout' | 'stderr' | 'truncated' | 'durationMs' | 'backend'>,
  limits: Limits,
  end: Ending,
): StepResult {
  const interrupted = !!end.interrupted;
  const oom = !interrupted && (!!end.oomKilled || uncaughtMemoryError(raw.exitCode, raw.stderr));
  const timedOut = !interrupted && !oom && !!end.timedOut;
  return {
    ...raw,
    exitCode: interrupted ? INTERRUPTED_EXIT : timedOut ? 124 : raw.exitCode,
    timedOut,
    stderr: raw.stderr + limitNotes(limits, { oom, timedOut, interrupted }),
    ...(oom ? { oom: true } : {}),
    ...(interrupted ? { interrupted: true } : {}),
  };
}

/** `{ workspaceExceeded: true }` when the workspace grew past its cap (checked after the step: best effort). */
export async function workspaceCheck(workspace: string, limits: Limits): Promise<{ workspaceExceeded?: true }> {
  return (await dirSize(workspace)) > limits.maxWorkspaceMb * MB ? { workspaceExceeded: true } : {};
}
