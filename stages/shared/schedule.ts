// The learning rate of optimiser step k (0-based) of `total`: a linear warmup
// from lr/warmupSteps up to lr over the first warmupSteps steps, then constant,
// a linear decay to 0, or a half cosine to 0 over the remaining steps. The
// first step after warmup uses the full rate.
export type Schedule = 'constant' | 'linear' | 'cosine';

export function learningRate(k: number, total: number, lr: number, schedule: Schedule, warmupSteps: number): number {
  if (k < warmupSteps) return (lr * (k + 1)) / warmupSteps;
  const rest = Math.max(1, total - warmupSteps);
  const progress = (k - warmupSteps) / rest;
  if (schedule === 'linear') return lr * (1 - progress);
  if (schedule === 'cosine') return lr * 0.5 * (1 + Math.cos(Math.PI * progress));
  return lr;
}

/** Warmup steps from a ratio of all steps (TRL's warmup_ratio): rounded up, so any positive ratio warms up. */
export const warmupSteps = (ratio: number, total: number) => Math.min(total, Math.ceil(ratio * total));
