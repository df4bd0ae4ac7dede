import type { ChildProcess } from 'node:child_process';

export interface Check {
  name: string;
  group: string;
  commands: string[][];
}
export const CHECKS: Check[];
export function prepare(): void;
export function pick(words: string[]): Check[];
export function runCheck(
  check: Check,
  opts?: { env?: NodeJS.ProcessEnv; onStart?: (child: ChildProcess) => void },
): Promise<{ ok: boolean; out: string }>;
