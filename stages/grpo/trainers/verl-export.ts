// `trainer: verl-export`: the verl export written into the node, for a cluster to launch; nothing is trained here.
import { join } from 'node:path';
import { writeVerlExport } from '../../../gpu/verl/export.js';
import type { Trainer } from './contract.js';
import { verlOptions } from './verl-options.js';

export const verlExportTrainer = {
  defaultLr: 1e-6,
  async open(run) {
    const files = await writeVerlExport(join(run.ctx.outDir, 'verl'), run.train, run.val, await verlOptions(run));
    run.ctx.log(`verl run directory written (not launched): ${files.join(', ')}`);
    return { result: { metrics: { train_tasks: run.train.length, val_tasks: run.val.length, exported: true } } };
  },
} satisfies Trainer;
