// Aggregates for evaluation tables: mean ± SEM over repeats, percentile
// bootstrap confidence intervals over tasks (seeded, so reports are
// reproducible), and pairwise win rates between policies on shared tasks.
import { Rng } from './random.js';

export function mean(xs: readonly number[]): number {
  return xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : NaN;
}

/** Population standard deviation (divides by n); 0 for no values. */
export function std(xs: readonly number[]): number {
  if (!xs.length) return 0;
  const m = mean(xs);
  return Math.sqrt(xs.reduce((a, x) => a + (x - m) ** 2, 0) / xs.length);
}

/** Sample standard deviation (divides by n − 1, as torch.std does by default); 0 below two values. */
export function sampleStd(xs: readonly number[]): number {
  if (xs.length < 2) return 0;
  const m = mean(xs);
  return Math.sqrt(xs.reduce((a, x) => a + (x - m) ** 2, 0) / (xs.length - 1));
}

/** Standard error of the mean (sample standard deviation / sqrt(n)); 0 for a single value. */
export function sem(xs: readonly number[]): number {
  return xs.length < 2 ? 0 : sampleStd(xs) / Math.sqrt(xs.length);
}

/** Percentile bootstrap interval of the mean: resample with replacement `reps` times. */
export function bootstrapCi(
  xs: readonly number[],
  opts: { reps?: number; level?: number; seed?: number | string } = {},
): [number, number] {
  if (!xs.length) return [NaN, NaN];
  const reps = opts.reps ?? 2000;
  const level = opts.level ?? 0.95;
  const rng = new Rng('bootstrap', opts.seed ?? 0);
  const means: number[] = [];
  for (let r = 0; r < reps; r++) {
    let s = 0;
    for (let i = 0; i < xs.length; i++) s += xs[Math.floor(rng.next() * xs.length)];
    means.push(s / xs.length);
  }
  means.sort((a, b) => a - b);
  const lo = Math.floor(((1 - level) / 2) * reps);
  const hi = Math.min(reps - 1, Math.ceil(((1 + level) / 2) * reps) - 1);
  return [means[lo], means[hi]];
}

/**
 * Win rate of policy A over policy B on the tasks both were graded on: a win
 * when A's score is strictly better, half a win on a tie (SandMLE Fig. 4).
 */
export function winRate(
  a: ReadonlyMap<string, number>,
  b: ReadonlyMap<string, number>,
  lowerIsBetter: (task: string) => boolean,
): { rate: number; tasks: number } {
  let wins = 0;
  let n = 0;
  for (const [task, sa] of a) {
    const sb = b.get(task);
    if (sb === undefined) continue;
    n++;
    if (sa === sb) wins += 0.5;
    else if (lowerIsBetter(task) ? sa < sb : sa > sb) wins += 1;
  }
  return { rate: n ? wins / n : NaN, tasks: n };
}
