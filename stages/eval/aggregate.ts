// From one record per run to the tables: per policy the MLE-bench rates as
// mean ± SEM over repeats with a 95% bootstrap interval over tasks; pairwise
// win rates on shared tasks (SandMLE Fig. 4); execution latency (Fig. 6);
// and MLE-bench's grading report.
import { bootstrapCi, mean, sem, winRate } from '../../core/stats.js';
import type { MedalReport } from '../../tasks/medals.js';
import { CATEGORIES, CATEGORY_OF, TOOLS_BY_NAME } from '../../tools/index.js';
import { DOMAINS } from '../../tools/types.js';
import type { MetricValue } from '../contract.js';

/** One run's report fields (MLE-bench's, plus MLToolBench's success and trajectory facts). */
export interface RunRecord extends MedalReport {
  task_id: string;
  policy: string;
  repeat: number;
  gold_threshold: number | null;
  silver_threshold: number | null;
  bronze_threshold: number | null;
  median_threshold: number | null;
  success: boolean | null;
  turns: number;
  duration_s: number;
  ended: string;
  format: number;
  reward: number | null;
  submission: string | null;
  /** The graded file as kept in the node's outputs (relative to them), when there was one. */
  kept_submission?: string | null;
  grade_error: string | null;
  /** graded, invalid (the submission's fault), grade_error (the grader's fault: the node fails) or no_submission. */
  grade_status: 'graded' | 'invalid' | 'grade_error' | 'no_submission';
  /** What the grader raised, for a grade_error. */
  grader_fault: string | null;
  /** When the run was graded (its end). */
  created_at: string;
  /** MLE-Dojo's HumanRank (0–1) against the task's human leaderboard; null when it has none. */
  human_rank: number | null;
  /** Seconds of each code execution. */
  step_seconds: number[];
  /** mlab: the diagnostic tools called, in order (file and script actions left out). */
  tools_called?: string[];
}

/**
 * MLToolBench's tool-use measures (its Table 5 and Eq. 7): diagnostic calls and
 * distinct tools per rollout, and per tool group the number of rollouts, out of
 * the first five repeats of a task, that call one at least once, averaged over
 * tasks. Groups are the registry's modules (shared, tabular, ...), passed in by
 * the caller; rollouts that offered no tools count as calling none.
 */
export function toolUseFields(
  mine: readonly RunRecord[],
  groupOf: (tool: string) => string | undefined,
  groups: readonly string[],
): Row {
  if (!mine.some((r) => r.tools_called)) return {};
  const calls = mine.map((r) => r.tools_called ?? []);
  const row: Row = {
    tool_calls: round(mean(calls.map((c) => c.length)), 2),
    distinct_tools: round(mean(calls.map((c) => new Set(c).size)), 2),
  };
  const tasks = [...new Set(mine.map((r) => r.task_id))].sort();
  for (const g of groups) {
    const perTask = tasks.map((t) => {
      const five = mine
        .filter((r) => r.task_id === t)
        .sort((a, b) => a.repeat - b.repeat)
        .slice(0, 5);
      return five.filter((r) => (r.tools_called ?? []).some((x) => groupOf(x) === g)).length;
    });
    row[`coverage_${g.replace(/-/g, '_')}`] = round(mean(perTask), 2);
  }
  return row;
}

export type Row = Record<string, MetricValue>;

export const RATES = [
  'valid_submission',
  'above_median',
  'bronze_medal',
  'silver_medal',
  'gold_medal',
  'any_medal',
  'success',
] as const;

const round = (x: number, d = 4) => (Number.isFinite(x) ? Number(x.toFixed(d)) : null);

/** Per policy: each rate in percent, its SEM over repeats and its bootstrap interval over tasks. */
export function policyRows(runs: readonly RunRecord[], policies: readonly string[], seed: number): Row[] {
  return policies.map((policy) => {
    const mine = runs.filter((r) => r.policy === policy);
    const tasks = [...new Set(mine.map((r) => r.task_id))].sort();
    const repeats = [...new Set(mine.map((r) => r.repeat))].sort((a, b) => a - b);
    const row: Row = { policy, tasks: tasks.length, runs: mine.length };
    for (const rate of RATES) {
      const known = mine.filter((r) => r[rate] !== null);
      if (!known.length) {
        row[rate] = null;
        continue;
      }
      const value = (r: RunRecord) => (r[rate] ? 100 : 0);
      // Over tasks: each task's mean over its repeats, resampled.
      const perTask = tasks
        .map((t) => known.filter((r) => r.task_id === t))
        .filter((rs) => rs.length)
        .map((rs) => mean(rs.map(value)));
      // Over repeats: the rate of each repeat across all tasks.
      const perRepeat = repeats
        .map((k) => known.filter((r) => r.repeat === k))
        .filter((rs) => rs.length)
        .map((rs) => mean(rs.map(value)));
      const [lo, hi] = bootstrapCi(perTask, { seed: `${seed}:${policy}:${rate}` });
      row[rate] = round(mean(perTask), 2);
      row[`${rate}_sem`] = round(sem(perRepeat), 2);
      row[`${rate}_lo`] = round(lo, 2);
      row[`${rate}_hi`] = round(hi, 2);
    }
    // HumanRank in percent, averaged like the rates: per task over repeats, then over tasks.
    const ranked = mine.filter((r) => r.human_rank !== null && Number.isFinite(r.human_rank));
    if (ranked.length) {
      const perTask = tasks
        .map((t) => ranked.filter((r) => r.task_id === t))
        .filter((rs) => rs.length)
        .map((rs) => mean(rs.map((r) => 100 * r.human_rank!)));
      const perRepeat = repeats
        .map((k) => ranked.filter((r) => r.repeat === k))
        .filter((rs) => rs.length)
        .map((rs) => mean(rs.map((r) => 100 * r.human_rank!)));
      const [lo, hi] = bootstrapCi(perTask, { seed: `${seed}:${policy}:human_rank` });
      row.human_rank = round(mean(perTask), 2);
      row.human_rank_sem = round(sem(perRepeat), 2);
      row.human_rank_lo = round(lo, 2);
      row.human_rank_hi = round(hi, 2);
    }
    row.turns = round(mean(mine.map((r) => r.turns)), 2);
    row.format = round(mean(mine.map((r) => r.format)), 3);
    row.duration_s = round(mean(mine.map((r) => r.duration_s)), 2);
    const rewards = mine.map((r) => r.reward).filter((x): x is number => x !== null);
    row.reward = rewards.length ? round(mean(rewards)) : null;
    Object.assign(
      row,
      toolUseFields(mine, (t) => TOOLS_BY_NAME.get(t)?.domain, DOMAINS),
    );
    // The paper's two categories (Table 5) beside the modules; calls and distinct tools are the same counts.
    Object.assign(
      row,
      toolUseFields(mine, (t) => CATEGORY_OF.get(t), CATEGORIES),
    );
    return row;
  });
}

/** Per task and policy: the mean score over repeats and how often it medalled. */
export function taskRows(runs: readonly RunRecord[]): Row[] {
  const keys = [...new Set(runs.map((r) => `${r.task_id}\u0000${r.policy}`))].sort();
  return keys.map((k) => {
    const [task, policy] = k.split('\u0000');
    const rs = runs.filter((r) => r.task_id === task && r.policy === policy);
    const scores = rs.map((r) => r.score).filter((s): s is number => s !== null);
    return {
      task,
      policy,
      runs: rs.length,
      score: scores.length ? round(mean(scores), 6) : null,
      valid_submission: round(mean(rs.map((r) => (r.valid_submission ? 100 : 0))), 2),
      any_medal: round(mean(rs.map((r) => (r.any_medal ? 100 : 0))), 2),
      bronze_threshold: rs[0].bronze_threshold,
      is_lower_better: rs[0].is_lower_better,
    };
  });
}

/**
 * Win rate of each policy (row) over each other (columns) on the tasks both
 * ran, comparing mean scores; an invalid submission loses to any valid one.
 * `overall` averages a policy's rates against all the others.
 */
export function winRateRows(runs: readonly RunRecord[], policies: readonly string[]): Row[] {
  const lower = new Map(runs.filter((r) => r.is_lower_better !== null).map((r) => [r.task_id, r.is_lower_better!]));
  const scores = new Map<string, Map<string, number>>();
  for (const p of policies) {
    const m = new Map<string, number>();
    for (const t of new Set(runs.filter((r) => r.policy === p).map((r) => r.task_id))) {
      const rs = runs.filter((r) => r.policy === p && r.task_id === t);
      const valid = rs.filter((r) => r.score !== null).map((r) => r.score!);
      // Worse than anything valid, in the task's direction.
      m.set(t, valid.length ? mean(valid) : lower.get(t) ? Infinity : -Infinity);
    }
    scores.set(p, m);
  }
  return policies.map((a) => {
    const row: Row = { policy: a };
    const rates: number[] = [];
    for (const b of policies) {
      if (a === b) {
        row[b] = null;
        continue;
      }
      const w = winRate(scores.get(a)!, scores.get(b)!, (t) => lower.get(t) ?? false);
      row[b] = round(100 * w.rate, 1);
      if (Number.isFinite(w.rate)) rates.push(w.rate);
    }
    row.overall = rates.length ? round(100 * mean(rates), 1) : null;
    return row;
  });
}

function quantile(sorted: readonly number[], q: number): number {
  if (!sorted.length) return NaN;
  const i = (sorted.length - 1) * q;
  const lo = Math.floor(i);
  return sorted[lo] + (sorted[Math.min(lo + 1, sorted.length - 1)] - sorted[lo]) * (i - lo);
}

/** Per policy: the distribution of code-execution seconds. */
export function latencyRows(runs: readonly RunRecord[], policies: readonly string[]): Row[] {
  const rows = policies.map((policy) =>
    latencyRow(
      policy,
      runs.filter((r) => r.policy === policy).flatMap((r) => r.step_seconds),
    ),
  );
  if (policies.length > 1)
    rows.push(
      latencyRow(
        'all',
        runs.flatMap((r) => r.step_seconds),
      ),
    );
  return rows;
}

function latencyRow(policy: string, xs: number[]): Row {
  const s = [...xs].sort((a, b) => a - b);
  return {
    policy,
    steps: s.length,
    mean_s: round(mean(s), 3),
    p50_s: round(quantile(s, 0.5), 3),
    p90_s: round(quantile(s, 0.9), 3),
    max_s: round(s[s.length - 1] ?? NaN, 3),
  };
}

const submitted = (r: RunRecord) => r.submission !== null && r.grade_error !== `no ${r.submission} in the workspace`;

/** What both grading reports say of one run, as MLE-bench names and orders it; `threshold` writes each threshold. */
function competition(r: RunRecord, threshold: (x: number | null) => unknown = (x) => x): Record<string, unknown> {
  return {
    competition_id: r.task_id,
    // A grader's infinity or NaN is a valid score in MLE-bench; JSON has neither, so it is the text float() reads back.
    score: typeof r.score === 'number' && !Number.isFinite(r.score) ? String(r.score) : r.score,
    gold_threshold: threshold(r.gold_threshold),
    silver_threshold: threshold(r.silver_threshold),
    bronze_threshold: threshold(r.bronze_threshold),
    median_threshold: threshold(r.median_threshold),
    any_medal: r.any_medal,
    gold_medal: r.gold_medal,
    silver_medal: r.silver_medal,
    bronze_medal: r.bronze_medal,
    above_median: r.above_median,
    submission_exists: submitted(r),
    valid_submission: r.valid_submission,
  };
}

/** The totals both grading reports open with, as MLE-bench names them. */
function totals(runs: readonly RunRecord[]): Record<string, number> {
  const count = (f: (r: RunRecord) => boolean) => runs.filter(f).length;
  return {
    total_runs: runs.length,
    total_runs_with_submissions: count(submitted),
    total_valid_submissions: count((r) => r.valid_submission),
    total_medals: count((r) => r.gold_medal || r.silver_medal || r.bronze_medal),
    total_gold_medals: count((r) => r.gold_medal),
    total_silver_medals: count((r) => r.silver_medal),
    total_bronze_medals: count((r) => r.bronze_medal),
    total_above_median: count((r) => r.above_median),
  };
}

/**
 * One policy's runs as MLE-bench writes its grading report: the same fields,
 * floats and booleans never null, the score null when nothing valid was
 * graded (as MLE-bench's is). A threshold the task lacks is NaN there; JSON
 * has no NaN, so it is the string "NaN", which MLE-bench's reader (float())
 * still reads as NaN.
 */
export function mlebenchReport(runs: readonly RunRecord[]): Record<string, unknown> {
  const float = (x: number | null) => (x === null || !Number.isFinite(x) ? 'NaN' : x);
  return {
    ...totals(runs),
    competition_reports: runs.map((r) => ({
      ...competition(r, float),
      is_lower_better: r.is_lower_better ?? false,
      created_at: r.created_at,
      // The kept copy, relative to the node's outputs: MLE-bench's grader can grade it again.
      submission_path: r.kept_submission ?? r.submission ?? '',
    })),
  };
}

/** Our grading report: MLE-bench's totals and one competition report per run (with its repeat and error), per policy. */
export function gradingReport(runs: readonly RunRecord[], policies: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const p of policies) {
    const rs = runs.filter((r) => r.policy === p);
    out[p] = {
      ...totals(rs),
      competition_reports: rs.map((r) => ({
        ...competition(r),
        repeat: r.repeat,
        is_lower_better: r.is_lower_better,
        submission_path: r.submission,
        status: r.grade_status,
        error: r.grader_fault ?? r.grade_error,
      })),
    };
  }
  return out;
}
