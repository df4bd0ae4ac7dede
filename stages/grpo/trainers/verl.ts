// `trainer: verl`: the export run as a Ray job here (verl-run.ts, loaded only for such a run). The job takes
// every step, so opening this trainer runs it and returns the node's result.
import type { Trainer } from './contract.js';
import { verlOptions } from './verl-options.js';

export const verlTrainer = {
  defaultLr: 1e-6,
  async open(run) {
    const options = await verlOptions(run);
    const { runVerl } = await import('../verl-run.js');
    return { result: await runVerl(run.ctx, run.train, run.val, options) };
  },
} satisfies Trainer;
