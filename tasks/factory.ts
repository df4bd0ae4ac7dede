// One task, end to end: the ML Developer's script runs in the sandbox, its
// files become the task folder, the MLOps Engineer's evaluator and the
// Technical Writer's description are added, and the result is verified by
// execution (the evaluator must grade the sample submission and the reference
// teams, whose leaderboard sets the thresholds) and checked for leakage. Any
// failure says at which role it happened.
import { cp, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { relativeFiles } from '../core/fs.js';
import { isObject, readJson } from '../core/json-files.js';
import type { Session } from '../sandbox/types.js';
import { csvHeader } from './csv-header.js';
import { runEvaluator } from './evaluate.js';
import { freezeLeaderboard } from './synthetic-leaderboard.js';
import { descriptionMd, evaluatorScript, generateTaskEnvScript, leakageProblems } from './roles.js';
import type { TaskSpec } from './spec.js';
import { writeTaskJson } from './taskjson.js';

export type BuildResult =
  | { ok: true; sampleScore: number; thresholds: Record<string, number> }
  | { ok: false; stage: 'generate' | 'evaluator' | 'leakage'; error: string };

export interface BuildOptions {
  /** A sandbox session over an empty task (the script needs no inputs). */
  session: Session;
  /** Host interpreter for the verification run of the evaluator. */
  python: string;
  timeoutMs?: number;
}

export async function buildTask(spec: TaskSpec, dest: string, opts: BuildOptions): Promise<BuildResult> {
  const ws = opts.session.workspace;
  const script = generateTaskEnvScript(spec);
  await writeFile(join(ws, 'generate_task_env.py'), script);
  const out = `out-${spec.task_id}`;
  const r = await opts.session.run(
    { file: 'generate_task_env.py', args: [out] },
    { timeoutMs: opts.timeoutMs ?? 300_000, memoryMb: 4096 },
  );
  if (r.exitCode !== 0) {
    return {
      ok: false,
      stage: 'generate',
      error: `generate_task_env.py failed (exit ${r.exitCode}): ${r.stderr.trim().split('\n').slice(-3).join(' | ')}`,
    };
  }
  await mkdir(dest, { recursive: true });
  await cp(join(ws, out, 'public'), join(dest, 'public'), { recursive: true });
  await cp(join(ws, out, 'private'), join(dest, 'private'), { recursive: true });
  await writeFile(join(dest, 'private', 'generate_task_env.py'), script);
  await writeFile(join(dest, 'private', 'evaluator.py'), evaluatorScript(spec));

  const sample = await readFile(join(dest, 'public', 'sample_submission.csv'), 'utf8');
  const description = descriptionMd(spec, sample.split('\n').slice(0, 4).join('\n'));
  await writeFile(join(dest, 'public', 'description.md'), description);

  const testColumns = (await csvHeader(join(dest, 'public', 'test.csv'))) ?? [];
  const rule = await readJson<{ hidden_rule?: unknown }>(join(dest, 'private', 'spec.json'), isObject);
  const leaks = leakageProblems(
    spec.target.name,
    description,
    testColumns,
    await relativeFiles(join(dest, 'public')),
    JSON.stringify(rule.hidden_rule ?? {}),
  );
  if (leaks.length) return { ok: false, stage: 'leakage', error: leaks.join('; ') };

  // Thresholds from the reference teams' leaderboard, graded by the evaluator just written.
  const board = await freezeLeaderboard(dest, join(ws, out, 'teams'), opts.python, spec.is_lower_better);
  if (!board.ok) return { ok: false, stage: 'evaluator', error: board.error };

  const graded = await runEvaluator(dest, opts.python);
  if (!graded.ok)
    return { ok: false, stage: 'evaluator', error: `evaluator on the sample submission: ${graded.error}` };

  const thresholds = await readJson<Record<string, number>>(join(dest, 'private', 'threshold.json'), isObject);
  await writeTaskJson(dest, {
    id: spec.task_id,
    modality: spec.source.modality,
    task_type: spec.generator,
    metric: spec.metric,
    is_lower_better: spec.is_lower_better,
    n_train: spec.n_train,
    n_test: spec.n_test,
    seed: spec.seed,
    scale: spec.scale,
    source: spec.source,
    mutations: spec.mutations,
    domain: { sector: spec.domain.sector, scenario: spec.domain.scenario },
    generator: 'procedural',
    sample_score: graded.score,
    leaderboard_teams: board.teams,
  });
  return { ok: true, sampleScore: graded.score, thresholds };
}
