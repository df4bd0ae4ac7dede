// Execution latency by policy (SandMLE Fig. 6): the distribution of code-execution seconds.
import { mean } from '../../core/stats.js';
import { round, type Row, type RunRecord } from './rows.js';

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
