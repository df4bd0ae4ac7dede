// One harness run's line of results.jsonl, and the tables made from them: per policy (and per competition) the
// MLE-bench rates in percent, averaged per competition over its repeats and then over competitions, with the
// SEM over repeats; HumanRank the same way. The names are eval's, so the tables, figures and the papers' joins
// read a harness node as they read an eval node.
import { mean, sem } from '../../core/stats.js';
import { humanRank, type TaskLeaderboard } from '../../tasks/leaderboard.js';
import { medalReport, type MedalReport } from '../../tasks/medals.js';
import type { EvaluatorResult, Grade } from '../../sandbox/evaluate.js';
import type { MetricValue } from '../contract.js';
import type { HarnessOutcome } from './adapter.js';

export interface RunRecord extends MedalReport {
  task_id: string;
  policy: string;
  repeat: number;
  seed: number;
  /** ok: the harness finished and left a submission; failed: why in `failure`; not_run: the node's time ran out. */
  status: 'ok' | 'failed' | 'not_run';
  failure: string | null;
  duration_s: number;
  /** Steps (nodes) in the harness's journal. */
  steps: number | null;
  /** The harness's own score of its final submission, when it grades (compare with `score`). */
  harness_score: number | null;
  /** The graded submission, relative to the node's outputs. */
  submission: string | null;
  journal: string | null;
  grade_status: 'graded' | 'invalid' | 'grade_error' | 'no_submission';
  grade_error: string | null;
  human_rank: number | null;
}

export interface RecordInput {
  task_id: string;
  policy: string;
  repeat: number;
  seed: number;
  duration_s: number;
  outcome: HarnessOutcome;
  submission: string | null;
  journal: string | null;
  grade: Grade | null;
  leaderboard: TaskLeaderboard | null;
}

export function runRecord(r: RecordInput): RunRecord {
  const evaluation: EvaluatorResult | null = r.grade?.ok ? r.grade.result : null;
  // A harness that grades with its own grader (MLE-Dojo) hands its grade over: valid, its score, no medals.
  const dojo = r.outcome.dojo;
  const m = dojo ? { ...medalReport(null), valid_submission: true, score: dojo.score } : medalReport(evaluation);
  const status: RunRecord['grade_status'] = dojo
    ? 'graded'
    : r.grade?.ok
      ? 'graded'
      : r.grade?.fault
        ? 'grade_error'
        : r.grade
          ? 'invalid'
          : 'no_submission';
  return {
    task_id: r.task_id,
    policy: r.policy,
    repeat: r.repeat,
    seed: r.seed,
    status: r.outcome.failure ? 'failed' : 'ok',
    failure: r.outcome.failure ?? null,
    duration_s: Number(r.duration_s.toFixed(3)),
    steps: r.outcome.steps ?? null,
    harness_score: r.outcome.harnessScore ?? null,
    submission: r.submission,
    journal: r.journal,
    ...m,
    grade_status: status,
    grade_error: r.grade && !r.grade.ok ? (r.grade.fault ?? r.grade.error) : null,
    human_rank: dojo
      ? dojo.humanRank
      : r.leaderboard
        ? humanRank(m.score, r.leaderboard.scores, r.leaderboard.is_lower_better)
        : null,
  };
}

/** A run the node's total time left no room for. */
export function notRun(task_id: string, policy: string, repeat: number, seed: number, why: string): RunRecord {
  return {
    ...runRecord({
      task_id,
      policy,
      repeat,
      seed,
      duration_s: 0,
      outcome: { failure: why },
      submission: null,
      journal: null,
      grade: null,
      leaderboard: null,
    }),
    status: 'not_run',
  };
}

const RATES = ['valid_submission', 'above_median', 'any_medal', 'gold_medal', 'silver_medal', 'bronze_medal'] as const;
const round = (x: number, d: number) => (Number.isFinite(x) ? Number(x.toFixed(d)) : null);

/** Mean over tasks of each task's mean over repeats, and the SEM over repeats of the mean across tasks. */
function spread(
  runs: readonly RunRecord[],
  value: (r: RunRecord) => number,
): { mean: number | null; sem: number | null } {
  const by = (key: (r: RunRecord) => string | number) => {
    const groups = new Map<string | number, number[]>();
    for (const r of runs) groups.set(key(r), [...(groups.get(key(r)) ?? []), value(r)]);
    return [...groups.values()].map(mean);
  };
  return { mean: round(mean(by((r) => r.task_id)), 2), sem: round(sem(by((r) => r.repeat)), 2) };
}

function row(runs: readonly RunRecord[], head: Record<string, MetricValue>): Record<string, MetricValue> {
  const out: Record<string, MetricValue> = {
    ...head,
    tasks: new Set(runs.map((r) => r.task_id)).size,
    runs: runs.length,
    failed: runs.filter((r) => r.status !== 'ok').length,
  };
  for (const rate of RATES) {
    const s = spread(runs, (r) => (r[rate] ? 100 : 0));
    out[rate] = s.mean;
    out[`${rate}_sem`] = s.sem;
  }
  const ranked = runs.filter((r) => r.human_rank !== null && Number.isFinite(r.human_rank));
  if (ranked.length) {
    const s = spread(ranked, (r) => 100 * r.human_rank!);
    out.human_rank = s.mean;
    out.human_rank_sem = s.sem;
  }
  const steps = runs.map((r) => r.steps).filter((x): x is number => x !== null);
  out.steps = steps.length ? round(mean(steps), 2) : null;
  out.duration_s = round(mean(runs.map((r) => r.duration_s)), 2);
  return out;
}

/** rows.json's tables: by policy, by policy and task, and every run. */
export function tables(runs: readonly RunRecord[], policies: readonly string[]): Record<string, unknown[]> {
  const tasks = [...new Set(runs.map((r) => r.task_id))].sort();
  return {
    policy: policies.map((policy) =>
      row(
        runs.filter((r) => r.policy === policy),
        { policy },
      ),
    ),
    task: policies.flatMap((policy) =>
      tasks.map((task) =>
        row(
          runs.filter((r) => r.policy === policy && r.task_id === task),
          { policy, task },
        ),
      ),
    ),
    runs: runs.map((r) => ({
      policy: r.policy,
      task: r.task_id,
      repeat: r.repeat,
      status: r.status,
      failure: r.failure,
      score: r.score,
      harness_score: r.harness_score,
      valid_submission: r.valid_submission,
      any_medal: r.any_medal,
      steps: r.steps,
    })),
  };
}
