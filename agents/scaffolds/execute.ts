// One code execution inside the sandbox and the observation the policy sees:
// exit code, timing and the ends of stdout and stderr.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Session, StepResult } from '../../sandbox/index.js';

/** The head and tail of a long text, with a marker saying how much was cut. */
export function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  const half = Math.floor(max / 2);
  return `${text.slice(0, half)}\n[… ${text.length - 2 * half} characters cut …]\n${text.slice(-half)}`;
}

export function observation(r: StepResult, max: number, timeoutMs: number): string {
  const head = r.timedOut
    ? `timed out after ${Math.round(timeoutMs / 1000)} s; every process the step started was stopped`
    : `exit code ${r.exitCode} · ${(r.durationMs / 1000).toFixed(2)} s`;
  const parts = [head];
  if (r.stdout.trim()) parts.push(`--- stdout ---\n${clip(r.stdout.trimEnd(), max)}`);
  if (r.stderr.trim()) parts.push(`--- stderr ---\n${clip(r.stderr.trimEnd(), max)}`);
  return parts.join('\n');
}

/** Writes the code as .steps/step_NNN.py in the workspace and runs it there. */
export async function execute(session: Session, code: string, index: number, timeoutMs: number): Promise<StepResult> {
  const rel = join('.steps', `step_${String(index).padStart(3, '0')}.py`);
  await mkdir(join(session.workspace, '.steps'), { recursive: true });
  await writeFile(join(session.workspace, rel), code);
  return session.run({ file: rel }, { timeoutMs });
}
