// Shaping's numbers: a step's figures over its scored calls (the curve's rows, for every trainer), and the
// node's summary of them.
import type { SolutionBank } from '../../../agents/shaping/bank.js';
import type { TurnScore } from '../../../agents/shaping/types.js';

/** A step's shaping figures over its scored calls (the worker's and verl's curves alike). */
export function shapingMetrics(used: readonly TurnScore[], beta: number): Record<string, number | null> {
  const scoredTurns = used.filter((t) => t.d !== null);
  const r4 = (x: number) => Number(x.toFixed(6));
  return {
    shaping_calls: used.length,
    shaping_scored: scoredTurns.length,
    shaping_mean_abs: scoredTurns.length
      ? r4(scoredTurns.reduce((a, t) => a + Math.abs(beta * (t.d as number)), 0) / scoredTurns.length)
      : 0,
    shaping_mean_d: scoredTurns.length
      ? r4(scoredTurns.reduce((a, t) => a + (t.d as number), 0) / scoredTurns.length)
      : 0,
    // Unscaled |d| by action type: the feedback magnitudes MLToolBench's Fig. 4 compares.
    score_abs_diagnostic: meanAbs(
      scoredTurns.filter((t) => t.category === 'diagnostic'),
      1,
    ),
    score_abs_execution: meanAbs(
      scoredTurns.filter((t) => t.category === 'execution'),
      1,
    ),
    beta: r4(beta),
  };
}

/** Mean |β·d|, or null when no call of that kind was scored (no calls is not a zero score). */
const meanAbs = (xs: readonly TurnScore[], beta: number) =>
  xs.length ? Number((xs.reduce((a, t) => a + Math.abs(beta * (t.d as number)), 0) / xs.length).toFixed(6)) : null;

/** The node's shaping metrics: β, the last quarter's mean |β·d|, the bank's size, unscaled |d| by action type over all steps. */
export function shapingSummary(
  curve: ReadonlyArray<Record<string, number | null>>,
  beta: number | undefined,
  bank: SolutionBank,
  quarter: number,
): Record<string, number | null> {
  const avg = (xs: ReadonlyArray<Record<string, number | null>>, key: string) => {
    const v = xs.map((m) => m[key]).filter((x): x is number => typeof x === 'number');
    return v.length ? Number((v.reduce((a, x) => a + x, 0) / v.length).toFixed(6)) : null;
  };
  const diag = avg(curve, 'score_abs_diagnostic');
  const exec = avg(curve, 'score_abs_execution');
  return {
    beta: beta ?? null,
    shaping_mean_abs_last: avg(curve.slice(-quarter), 'shaping_mean_abs'),
    bank_size: bank.size(),
    score_abs_diagnostic: diag,
    score_abs_execution: exec,
    diagnostic_over_execution: diag !== null && exec ? Number((diag / exec).toFixed(4)) : null,
  };
}
