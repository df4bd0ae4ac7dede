// Where a `provider: worker` entry's weights are: its path:, the checkpoint an upstream node saved, or a
// tiny random model. Checked against the node's inputs, so a missing folder is the user's error, named.
import { existsSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import { UserError } from '../../core/errors.js';
import { workerWeights, type ModelSpec } from '../../core/models.js';
import type { StageContext } from '../contract.js';

/** Where an upstream stage keeps the checkpoint a worker can load. */
export const CHECKPOINT_DIR = 'checkpoint';

/** The folder a worker entry's weights are in, or the tiny model; checked against the node's inputs. */
export function weightsFor(
  ctx: Pick<StageContext<unknown>, 'experimentDir' | 'inputs'>,
  name: string,
  spec: ModelSpec,
): { dir: string } | { tiny: true; seed: number } {
  const w = workerWeights(spec);
  if ('error' in w) throw new UserError(`model ${name}: ${w.error}`);
  if ('tiny' in w) return { tiny: true, seed: w.tiny };
  if ('path' in w) {
    const dir = isAbsolute(w.path) ? w.path : resolve(ctx.experimentDir, w.path);
    if (!existsSync(dir)) throw new UserError(`model ${name}: path ${w.path}: no such folder`);
    return { dir };
  }
  const input = ctx.inputs.find((i) => i.name === w.checkpoint);
  if (!input) throw new UserError(`model ${name}: checkpoint: ${w.checkpoint} must be a stage in this stage's needs:`);
  const dir = join(input.dir, CHECKPOINT_DIR);
  if (!existsSync(dir))
    throw new UserError(
      `model ${name}: stage ${w.checkpoint} wrote no ${CHECKPOINT_DIR}/ (only sft, and grpo with trainer: worker, do)`,
    );
  return { dir };
}
