// `trainer: verl-export`: the verl export written into the node, for a cluster to launch; nothing is trained here,
// so the node hands on no weights. Under `select: best-val` the run directory says which step to take
// (select.json): the job keeps every checkpoint (keep_checkpoints: 0 is required), and whoever collects its results
// picks the best validated one by the same rule the verl trainer applies.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { writeVerlExport } from '../../../gpu/verl/export.js';
import type { Trainer } from './contract.js';
import { verlOptions } from './verl-options.js';

/** The rule of `select: best-val` in terms of the job's own files. */
const BEST_VAL = {
  select: 'best-val',
  metric: 'val-core/mlepipe/reward/mean@1 in metrics.jsonl',
  among: 'the steps N with checkpoints/global_step_N/actor/huggingface/config.json (N >= 1)',
  ties: 'the earlier step',
};

export const verlExportTrainer = {
  defaultLr: 1e-6,
  async open(run) {
    const dir = join(run.ctx.outDir, 'verl');
    const files = await writeVerlExport(dir, run.train, run.val, await verlOptions(run));
    if (run.p.select === 'best-val') {
      await writeFile(join(dir, 'select.json'), JSON.stringify(BEST_VAL, null, 1) + '\n');
      files.push('select.json');
    }
    run.ctx.log(`verl run directory written (not launched): ${files.join(', ')}`);
    return { result: { metrics: { train_tasks: run.train.length, val_tasks: run.val.length, exported: true } } };
  },
} satisfies Trainer;
