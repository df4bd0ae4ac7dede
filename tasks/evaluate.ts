// Runs a task's own evaluator on the host (it is trusted code the factory
// wrote; agent submissions go through sandbox/evaluate.ts instead). Both read
// the evaluator's answer the same way (parseEvaluatorOutput).
import { join, resolve } from 'node:path';
import {
  evaluatorView,
  outputMode,
  parseEvaluatorOutput,
  type EvaluatorResult,
  type OutputMode,
} from '../sandbox/evaluate.js';
import { runTrusted } from '../sandbox/grader.js';

export type EvalOutput = ({ ok: true } & EvaluatorResult) | { ok: false; error: string; fault?: string };

/** Grades `submission` (default: the task's own sample submission, named explicitly for evaluators without a default). */
export async function runEvaluator(
  task: string,
  python: string,
  submission?: string,
  mode?: OutputMode,
): Promise<EvalOutput> {
  // Absolute: the evaluator runs in a view of the task's files, where relative paths would mean something else.
  const taskDir = resolve(task);
  const view = await evaluatorView(taskDir);
  try {
    const r = await runTrusted(
      python,
      join(taskDir, 'private', 'evaluator.py'),
      ['--submission_path', submission ? resolve(submission) : join(taskDir, 'public', 'sample_submission.csv')],
      { cwd: view.dir, timeoutMs: 120_000 },
    );
    const g = parseEvaluatorOutput(String(r.stdout), String(r.stderr), r.exitCode, mode ?? (await outputMode(taskDir)));
    return g.ok ? { ok: true, ...g.result } : g;
  } finally {
    await view.close();
  }
}
