// Importer for released SandMLE task folders, which keep evaluator.py and
// answer.csv inside prepared/public/: they move to private/, the rest stays
// public, and task.json records where the task came from, its metric and its
// direction (AIDE picks its best node by them).
import { cp, mkdir, readdir, readFile, rm, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { UserError } from '../core/errors.js';
import { runEvaluator } from './evaluate.js';
import { writeTaskJson } from './taskjson.js';

/** Files that an agent must never see, wherever the release put them. */
const PRIVATE_NAMES = new Set([
  'evaluator.py',
  'answer.csv',
  'threshold.json',
  'generate_task_env.py',
  'spec.json',
  'answers.csv',
]);

async function isDir(p: string): Promise<boolean> {
  return (await stat(p).catch(() => null))?.isDirectory() ?? false;
}

/** Task folders under SRC: SRC itself when it holds prepared/public, else its children that do. */
export async function findReleaseTasks(src: string): Promise<string[]> {
  if (await isDir(join(src, 'prepared', 'public'))) return [src];
  const out: string[] = [];
  for (const name of (await readdir(src).catch(() => [] as string[])).sort()) {
    if (await isDir(join(src, name, 'prepared', 'public'))) out.push(join(src, name));
  }
  if (!out.length) throw new UserError(`${src}: no SandMLE task found (expected <id>/prepared/public/)`);
  return out;
}

export interface ImportResult {
  id: string;
  moved: string[];
  problems: string[];
}

/**
 * Metric names as the release's evaluators call them, most specific first
 * (root mean squared before mean squared, macro F1 before F1).
 */
const METRICS: Array<[string, RegExp]> = [
  ['quadratic_weighted_kappa', /quadratic[\s\S]{0,80}kappa|kappa[\s\S]{0,80}quadratic/],
  ['rmse', /\brmse\b|root_mean_squared|sqrt\([^)]*mean_squared_error|mean_squared_error\([^)]*squared\s*=\s*false/],
  ['mse', /mean_squared_error/],
  ['mae', /mean_absolute_error|\bmae\b/],
  ['log_loss', /log_loss|logloss/],
  ['roc_auc', /roc_auc/],
  ['macro_f1', /f1_score\([^)]*macro|macro[ _-]?f1/],
  ['f1', /f1_score|\bf1\b/],
  ['r2', /r2_score|\br2\b/],
  ['accuracy', /accuracy/],
];

/** The metric an evaluator computes, read from its source (else the description), or null. */
export function metricName(...texts: string[]): string | null {
  for (const text of texts) {
    const lower = text.toLowerCase();
    for (const [name, re] of METRICS) if (re.test(lower)) return name;
  }
  return null;
}

export async function importSandmleTask(taskDir: string, destRoot: string, python: string): Promise<ImportResult> {
  const id = basename(taskDir);
  const pub = join(taskDir, 'prepared', 'public');
  const dest = join(destRoot, id);
  await rm(dest, { recursive: true, force: true });
  await mkdir(join(dest, 'public'), { recursive: true });
  await mkdir(join(dest, 'private'), { recursive: true });
  const moved: string[] = [];
  for (const name of await readdir(pub)) {
    const privateFile = PRIVATE_NAMES.has(name);
    await cp(join(pub, name), join(dest, privateFile ? 'private' : 'public', name), { recursive: true });
    if (privateFile) moved.push(name);
  }
  // Anything already private in the release stays private.
  if (await isDir(join(taskDir, 'prepared', 'private'))) {
    for (const name of await readdir(join(taskDir, 'prepared', 'private')))
      await cp(join(taskDir, 'prepared', 'private', name), join(dest, 'private', name), { recursive: true });
  }
  const problems: string[] = [];
  for (const need of ['evaluator.py', 'answer.csv'])
    if (!(await stat(join(dest, 'private', need)).catch(() => null))) problems.push(`no ${need}`);
  // The direction is what the evaluator itself prints on the sample submission.
  let direction: boolean | null = null;
  if (!problems.length) {
    const graded = await runEvaluator(dest, python, undefined, 'release');
    if (graded.ok) direction = graded.is_lower_better;
    else problems.push(`the evaluator does not grade sample_submission.csv: ${graded.error}`);
  }
  const text = async (p: string) => readFile(p, 'utf8').catch(() => '');
  const metric = metricName(
    await text(join(dest, 'private', 'evaluator.py')),
    await text(join(dest, 'public', 'description.md')),
  );
  // Its output is read as the release read it; a null threshold is kept (the release's reward then falls back to its format part).
  await writeTaskJson(dest, {
    id,
    generator: 'sandmle-release',
    evaluator_output: 'release',
    metric,
    is_lower_better: direction,
    source: { release: taskDir },
  });
  return { id, moved, problems };
}
