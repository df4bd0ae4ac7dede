// The node's summary of its training curve (metrics.jsonl), the same for every trainer. The names are
// described in docs/training.md: *_first and *_last are means over the first and the last quarter of the steps
// (at least one step), so one noisy step does not decide them.
import { mean } from '../../core/stats.js';

export type CurveRow = Record<string, number | null>;

/** Steps in a quarter of a run of `n` steps, at least one. */
export const quarterOf = (n: number) => Math.max(1, Math.floor(n / 4));

/** The mean of `key` over the rows that report it, to four places; null when none does. */
function quarterMean(rows: readonly CurveRow[], key: string): number | null {
  const values = rows.map((m) => m[key]).filter((x): x is number => typeof x === 'number');
  return values.length ? Number(mean(values).toFixed(4)) : null;
}

export function curveSummary(curve: readonly CurveRow[]): Record<string, number | null> {
  const quarter = quarterOf(curve.length);
  const first = curve.slice(0, quarter);
  const last = curve.slice(-quarter);
  return {
    steps: curve.length,
    reward_first: quarterMean(first, 'reward_mean'),
    reward_last: quarterMean(last, 'reward_mean'),
    valid_first: quarterMean(first, 'valid_rate'),
    valid_last: quarterMean(last, 'valid_rate'),
    entropy_last: curve[curve.length - 1]?.entropy ?? null,
    // The extremes the paper reads off its training curves (Fig. 8).
    ...extremes(curve),
  };
}

/** The last validation pass's rates, when the run validated. */
export function lastValidation(curve: readonly CurveRow[]): CurveRow {
  const row = [...curve].reverse().find((m) => m.val_reward !== undefined);
  return row
    ? {
        val_reward: row.val_reward,
        val_valid: row.val_valid,
        val_any_medal: row.val_any_medal,
        val_crashes: row.val_crashes,
      }
    : {};
}

/** The highest mean training reward and the range of the valid rate over the steps. */
function extremes(curve: readonly CurveRow[]): Record<string, number | null> {
  const of = (k: string) => curve.map((r) => r[k]).filter((v): v is number => typeof v === 'number');
  const rewards = of('reward_mean');
  const valid = of('valid_rate');
  return {
    reward_max: rewards.length ? Math.max(...rewards) : null,
    valid_min: valid.length ? Math.min(...valid) : null,
    valid_max: valid.length ? Math.max(...valid) : null,
  };
}
