// Runs a task's own evaluator on the host (it is trusted code the factory
// wrote; agent submissions go through sandbox/evaluate.ts instead).
import { join } from 'node:path';
import { runTrusted } from '../sandbox/grader.js';

export type EvalOutput =
  | { ok: true; score: number; gold_threshold: number; silver_threshold: number; bronze_threshold: number; median_threshold: number; is_lower_better: boolean }
  | { ok: false; error: string };

/** Grades `submission` (default: the task's own sample submission, named explicitly for evaluators without a default). */
export async function runEvaluator(taskDir: string, python: string, submission?: string): Promise<EvalOutput> {
  const r = await runTrusted(python, join(taskDir, 'private', 'evaluator.py'), ['--submission_path', submission ?? join(taskDir, 'public', 'sample_submission.csv')], { cwd: taskDir, timeoutMs: 120_000 });
  const lines = String(r.stdout).trim().split('\n');
  if (lines.length !== 1 || r.exitCode !== 0) {
    return { ok: false, error: `evaluator must print one JSON line and exit 0 (exit ${r.exitCode}, ${lines.length} lines): ${String(r.stderr).trim().split('\n').pop() ?? ''}` };
  }
  try {
    const out = JSON.parse(lines[0]) as Record<string, unknown>;
    if (typeof out.error === 'string') return { ok: false, error: out.error };
    return { ok: true, ...(out as Omit<Extract<EvalOutput, { ok: true }>, 'ok'>) };
  } catch {
    return { ok: false, error: `evaluator printed no JSON: ${lines[0].slice(0, 200)}` };
  }
}
