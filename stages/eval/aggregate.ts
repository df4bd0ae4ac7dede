// From one record per run to the tables: per policy the MLE-bench rates as
// mean ± SEM over repeats with a 95% bootstrap interval over tasks; pairwise
// win rates on shared tasks (SandMLE Fig. 4). Latency is in latency.ts, the
// tool-use measures in tool-use.ts, the grading reports in grading.ts.
import { bootstrapCi, mean, sem, winRate } from '../../core/stats.js';
import { CATEGORIES, CATEGORY_OF, TOOLS_BY_NAME } from '../../tools/index.js';
import { DOMAINS } from '../../tools/types.js';
import { round, type Row, type RunRecord } from './rows.js';
import { toolUseFields } from './tool-use.js';

export const RATES = [
  'valid_submission',
  'above_median',
  'bronze_medal',
  'silver_medal',
  'gold_medal',
  'any_medal',
  'success',
] as const;

/** A per-run value's mean over tasks (each task's mean over its repeats), its SEM over repeats and its interval. */
function spread(
  runs: readonly RunRecord[],
  tasks: readonly string[],
  repeats: readonly number[],
  value: (r: RunRecord) => number,
  seed: string,
) {
  // Over tasks: each task's mean over its repeats, resampled.
  const perTask = tasks
    .map((t) => runs.filter((r) => r.task_id === t))
    .filter((rs) => rs.length)
    .map((rs) => mean(rs.map(value)));
  // Over repeats: the value of each repeat across all tasks.
  const perRepeat = repeats
    .map((k) => runs.filter((r) => r.repeat === k))
    .filter((rs) => rs.length)
    .map((rs) => mean(rs.map(value)));
  const [lo, hi] = bootstrapCi(perTask, { seed });
  return { mean: round(mean(perTask), 2), sem: round(sem(perRepeat), 2), lo: round(lo, 2), hi: round(hi, 2) };
}

/** Writes `name`, `name_sem`, `name_lo` and `name_hi` into the row. */
function putSpread(row: Row, name: string, s: ReturnType<typeof spread>): void {
  row[name] = s.mean;
  row[`${name}_sem`] = s.sem;
  row[`${name}_lo`] = s.lo;
  row[`${name}_hi`] = s.hi;
}

/** Per policy: each rate in percent, its SEM over repeats and its bootstrap interval over tasks. */
export function policyRows(runs: readonly RunRecord[], policies: readonly string[], seed: number): Row[] {
  return policies.map((policy) => {
    const mine = runs.filter((r) => r.policy === policy);
    const tasks = [...new Set(mine.map((r) => r.task_id))].sort();
    const repeats = [...new Set(mine.map((r) => r.repeat))].sort((a, b) => a - b);
    const row: Row = { policy, tasks: tasks.length, runs: mine.length };
    for (const rate of RATES) {
      const known = mine.filter((r) => r[rate] !== null);
      if (!known.length) row[rate] = null;
      else
        putSpread(
          row,
          rate,
          spread(known, tasks, repeats, (r) => (r[rate] ? 100 : 0), `${seed}:${policy}:${rate}`),
        );
    }
    // HumanRank in percent, averaged like the rates: per task over repeats, then over tasks.
    const ranked = mine.filter((r) => r.human_rank !== null && Number.isFinite(r.human_rank));
    if (ranked.length)
      putSpread(
        row,
        'human_rank',
        spread(ranked, tasks, repeats, (r) => 100 * r.human_rank!, `${seed}:${policy}:human_rank`),
      );
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
    // A valid score that is not finite makes the mean infinite or NaN, as numpy's mean would: kept, not blanked.
    const m = mean(scores);
    return {
      task,
      policy,
      runs: rs.length,
      score: scores.length ? (Number.isFinite(m) ? round(m, 6) : m) : null,
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
