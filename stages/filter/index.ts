// `uses: filter`: the environment sanity verification (SandMLE §3.4.2). Every
// evaluator is run again on its sample submission; tasks whose thresholds
// are not strictly monotonic, or whose gold is not better than the sample,
// are dropped, then duplicates; the rest is split into train and val.
// filter.json reports the count after every step (the paper: 1,106 → 912).
import schema from '../../schemas/stages/filter.schema.json';
import type { Stage } from '../contract.js';
import { lazyRun } from '../lazy.js';
import { filterSize } from './size.js';

export interface FilterParams {
  val: number;
  train?: number;
  seed: number;
  dedupe: boolean;
  concurrency: number;
}

export const filter: Stage<FilterParams> = {
  kind: 'filter',
  version: 1,
  description: 'Sanity-check generated tasks, drop duplicates, split train/val.',
  schema,
  // How many evaluators run at once does not change the outcome.
  keyIgnore: ['concurrency'],
  flow: { gives: ['tasks', 'split'], takes: () => ['tasks'] },
  // Every evaluator is run again in Python.
  keyExtras: async (_p, ctx) => ({ python: await ctx.python() }),

  size: filterSize,
  run: lazyRun(() => import('./run.js')),
};
