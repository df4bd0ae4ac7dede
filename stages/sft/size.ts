// How much work an sft node is: its examples (a data: file counted now, else the trajectories its inputs
// will hold, at most: filters and dedup drop some) times the epochs, and the optimiser steps they make.
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Count, SizeContext, WorkSize } from '../contract.js';
import { trainerGpus } from '../shared/gpus.js';
import { counted, exactly, product, total } from '../shared/size.js';
import type { SftParams } from './index.js';

export function sftSize(p: SftParams, ctx: SizeContext): WorkSize {
  const written = examplesIn(p, ctx);
  const examples = written && { n: written.n, atMost: true };
  const epochs = exactly(p.epochs);
  const train = examples && Math.max(1, Math.round(examples.n * (1 - p.val_fraction)));
  const steps = train === undefined ? undefined : { n: Math.ceil(train / p.batch_size) * p.epochs, atMost: true };
  const gpus = trainerGpus(p, ctx.models, ctx.placedGpus);
  return {
    work: [
      {
        n: product(examples, epochs),
        unit: 'example passes',
        of: `${counted(examples, 'example')} × ${counted(epochs, 'epoch')}`,
      },
      {
        n: steps,
        unit: 'optimizer steps',
        of: `batches of ${p.batch_size}, ${Math.round(p.val_fraction * 100)}% held out`,
      },
    ],
    ...(gpus === undefined ? {} : { gpus }),
  };
}

/** Lines of the data: file, else the trajectories of the inputs. */
function examplesIn(p: SftParams, ctx: SizeContext): Count {
  if (p.data) {
    const file = resolve(ctx.experimentDir, p.data);
    return existsSync(file)
      ? exactly(
          readFileSync(file, 'utf8')
            .split('\n')
            .filter((l) => l.trim()).length,
        )
      : undefined;
  }
  return total(ctx.inputs.filter((i) => 'trajectories' in i).map((i) => i.trajectories));
}
