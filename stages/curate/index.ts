// `uses: curate`: the demonstrations an SFT stage learns from, filtered as
// MLToolBench App. D.1: the run executed without error, its submission is
// valid, and it beats the starter baseline by more than one baseline standard
// deviation in the metric's direction; then near-duplicates are removed by
// embedding similarity, keeping the highest-improvement run of each cluster.
// Kept runs are written unchanged into trajectories.jsonl; curation.json
// counts what each rule dropped and names the embedder.
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { assetText } from '../../core/assets.js';
import { statListing } from '../../core/fs.js';
import { sha256 } from '../../core/hash.js';
import schema from '../../schemas/stages/curate.schema.json';
import type { Stage } from '../contract.js';
import { lazyRun } from '../lazy.js';

export interface CurateParams {
  min_gain_std: number;
  dedup: boolean;
  similarity: number;
  scope: 'task' | 'all';
  embedding_model?: string;
}

export const curate: Stage<CurateParams> = {
  kind: 'curate',
  version: 1,
  description:
    'Filter demonstrations for SFT (execution, valid submission, gain over the starter beyond one std), then embedding near-duplicate removal.',
  schema,
  flow: { gives: ['trajectories'], takes: () => ['trajectories'] },

  check(p, ctx) {
    if (p.embedding_model && !existsSync(resolve(ctx.experimentDir, p.embedding_model)))
      return [{ param: ['embedding_model'], message: `${p.embedding_model}: no such folder` }];
    return [];
  },

  async keyExtras(p, ctx) {
    // A model folder by its files' names, sizes and times: weights are large, and written once.
    const model = p.embedding_model ? await statListing(resolve(ctx.experimentDir, p.embedding_model)) : null;
    return { embedder: sha256(assetText('python/embed_dedup.py')), model, python: p.dedup ? await ctx.python() : null };
  },

  run: lazyRun(() => import('./run.js')),
};
