// The GRPO trainers by the name `trainer:` gives. A name without a trainer, or a trainer without its name,
// does not compile.
import type { GrpoParams } from '../index.js';
import type { Trainer } from './contract.js';
import { templateTrainer } from './template.js';
import { verlTrainer } from './verl.js';
import { verlExportTrainer } from './verl-export.js';
import { workerTrainer } from './worker.js';

export const TRAINERS = {
  template: templateTrainer,
  worker: workerTrainer,
  verl: verlTrainer,
  'verl-export': verlExportTrainer,
} as const satisfies { readonly [K in GrpoParams['trainer']]: Trainer };
