// What a task's own files state about its grading: the medal thresholds, the metric's direction and the human
// leaderboard. A run the evaluator never graded (no submission, a grader fault) still reports them, as MLE-bench
// reports thresholds for a run without a valid submission.
import { join } from 'node:path';
import { isObject, readJson } from '../../core/json-files.js';
import { readTaskLeaderboard, type TaskLeaderboard } from '../../tasks/leaderboard.js';
import type { StageContext } from '../contract.js';
import { listTasks, type TaskRef } from '../shared/tasks.js';
import type { EvalParams } from './index.js';

/** What a task states about its thresholds and direction, for runs its evaluator never graded. */
export interface TaskFacts {
  gold_threshold: number | null;
  silver_threshold: number | null;
  bronze_threshold: number | null;
  median_threshold: number | null;
  is_lower_better: boolean | null;
  /** The human leaderboard's scores in rank order (MLE-bench tasks), for HumanRank. */
  leaderboard: TaskLeaderboard | null;
  /** Whether a known solution passes the success line (an MLToolBench-style instance's build check); null: unchecked. */
  attainable: boolean | null;
}

export const NO_FACTS: TaskFacts = {
  gold_threshold: null,
  silver_threshold: null,
  bronze_threshold: null,
  median_threshold: null,
  is_lower_better: null,
  leaderboard: null,
  attainable: null,
};

/** A file of the task's as an object; a task without it (or with a damaged one) states nothing there. */
const readFacts = (file: string) =>
  readJson<Record<string, unknown>>(file, isObject).catch(() => ({}) as Record<string, unknown>);

/** A task's threshold.json and task.json direction (MLE-bench reports thresholds even for a run without a valid submission). */
export async function taskFacts(dir: string): Promise<TaskFacts> {
  const th = await readFacts(join(dir, 'private', 'threshold.json'));
  const task = await readFacts(join(dir, 'task.json'));
  const reach = await readFacts(join(dir, 'private', 'attainability.json'));
  const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : null);
  return {
    gold_threshold: num(th.gold_threshold),
    silver_threshold: num(th.silver_threshold),
    bronze_threshold: num(th.bronze_threshold),
    median_threshold: num(th.median_threshold),
    is_lower_better: typeof task.is_lower_better === 'boolean' ? task.is_lower_better : null,
    leaderboard: await readTaskLeaderboard(dir),
    attainable: typeof reach.attainable === 'boolean' ? reach.attainable : null,
  };
}

/**
 * The best success rate (Eq. 6, in percent) the tasks allow: every task a known solution passes succeeds on
 * every run, the others never. Undefined when no task was checked (nothing says there is a ceiling); a task
 * that was not checked counts as within reach.
 */
export function attainableMax(taskIds: readonly string[], facts: ReadonlyMap<string, TaskFacts>): number | undefined {
  const verdicts = taskIds.map((t) => facts.get(t)?.attainable ?? null);
  if (!taskIds.length || verdicts.every((v) => v === null)) return undefined;
  return Number(((100 * verdicts.filter((v) => v !== false).length) / taskIds.length).toFixed(2));
}

/** The facts of every task, by id. */
export async function factsByTask(tasks: readonly TaskRef[]): Promise<Map<string, TaskFacts>> {
  return new Map(await Promise.all(tasks.map(async (t) => [t.id, await taskFacts(t.dir)] as const)));
}

/** The tasks an eval node runs (or a rescore reports on): its tasks:, split and limit over its inputs. */
export function evalTasks(ctx: StageContext<EvalParams>): Promise<TaskRef[]> {
  const p = ctx.params;
  return listTasks({
    tasks: p.tasks,
    split: p.split,
    limit: p.limit,
    inputs: ctx.inputs,
    experimentDir: ctx.experimentDir,
  });
}
