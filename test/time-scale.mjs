// The factor applied to the few limits the tests still measure on a wall
// clock (a step's timeout plus its allowed overshoot, how long to wait for a
// process to appear, the runner's per-file limit). Tests check behaviour, not
// speed, but these limits stand between a hung test and a stuck suite, and a
// loaded machine stretches everything. MLEPIPE_TEST_TIME_SCALE sets it; else
// 2 under CI, and more when the load average is above the core count.
import { availableParallelism, loadavg } from 'node:os';

export function timeScale(env = process.env) {
  const set = Number(env.MLEPIPE_TEST_TIME_SCALE);
  if (set > 0) return set;
  const load = loadavg()[0] / availableParallelism();
  return Math.round(Math.min(4, Math.max(env.CI ? 2 : 1, load)) * 10) / 10;
}
