// The sanity rule (SandMLE §4.2; docs/tasks.md): thresholds strictly monotonic in
// the metric's direction, and gold strictly better than the sample submission.

export interface Thresholds {
  gold_threshold: number | null;
  silver_threshold: number | null;
  bronze_threshold: number | null;
  median_threshold: number | null;
}

/** Why a task fails the rule, or null when it passes. */
export function sanityProblem(th: Thresholds, sampleScore: number, lowerIsBetter: boolean): string | null {
  const order = [th.gold_threshold, th.silver_threshold, th.bronze_threshold, th.median_threshold];
  const names = ['gold', 'silver', 'bronze', 'median'];
  // A task without some milestone cannot train the milestone reward.
  const missing = order.findIndex((x) => x === null);
  if (missing >= 0) return `no ${names[missing]} threshold (null)`;
  const better = (a: number, b: number) => (lowerIsBetter ? a < b : a > b);
  for (let i = 0; i + 1 < order.length; i++) {
    if (!better(order[i]!, order[i + 1]!))
      return `${names[i]} (${order[i]}) is not strictly better than ${names[i + 1]} (${order[i + 1]})`;
  }
  if (!better(th.gold_threshold!, sampleScore))
    return `gold (${th.gold_threshold}) is not strictly better than the sample submission (${sampleScore})`;
  return null;
}
