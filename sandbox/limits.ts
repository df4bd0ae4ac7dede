// What every backend reports the same way when a limit ended or marked a step.
import { dirSize } from '../core/fs.js';
import type { Limits } from './types.js';

export const MB = 1024 * 1024;

/** Lines appended to stderr when the memory cap or the timeout ended the step. */
export function limitNotes(limits: Limits, hit: { oom?: boolean; timedOut?: boolean }): string {
  let s = '';
  if (hit.oom) s += `\n[mlepipe: the step hit its memory cap of ${limits.memoryMb} MB]`;
  if (hit.timedOut) s += `\n[mlepipe: the step was killed after its timeout of ${limits.timeoutMs / 1000} s]`;
  return s;
}

/** `{ workspaceExceeded: true }` when the workspace grew past its cap (checked after the step: best effort). */
export async function workspaceCheck(workspace: string, limits: Limits): Promise<{ workspaceExceeded?: true }> {
  return (await dirSize(workspace)) > limits.maxWorkspaceMb * MB ? { workspaceExceeded: true } : {};
}
