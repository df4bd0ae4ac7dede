// How much work a grpo node is: steps × batch × group rollouts, the validation rollouts, and the GPUs the
// trainer holds, with a bound on their GPU-hours from the episodes' time budget.
import type { Count, SizeContext, WorkAmount, WorkSize } from '../contract.js';
import { trainerGpus } from '../shared/gpus.js';
import { counted, exactly, product, tasksRead } from '../shared/size.js';
import type { GrpoParams } from './index.js';

export function grpoSize(p: GrpoParams, ctx: SizeContext): WorkSize {
  // verl-export writes the job and stops: the work is the cluster's, when someone runs it.
  if (p.trainer === 'verl-export') return { work: [], gpus: 0 };
  const rollouts = exactly(p.steps * p.batch_size * p.group_size);
  const work: WorkAmount[] = [
    { n: rollouts, unit: 'rollouts', of: `${p.steps} steps × ${p.batch_size} tasks × groups of ${p.group_size}` },
  ];
  // Validation: every eval_every steps and after the last, once on each val task.
  const validations = p.eval_every > 0 ? Math.ceil(p.steps / p.eval_every) : 0;
  const valTasks = validations ? tasksRead({ tasks: p.tasks, split: p.val_split }, ctx) : undefined;
  const valRollouts = validations ? product(exactly(validations), valTasks) : exactly(0);
  if (validations)
    work.push({
      n: valRollouts,
      unit: 'validation rollouts',
      of: `${counted(exactly(validations), 'validation')} × ${counted(valTasks, 'val task')}`,
    });
  const gpus = trainerGpus({ ...p, model: p.policy }, ctx.models, ctx.placedGpus);
  return {
    work,
    ...(gpus === undefined ? {} : { gpus }),
    ...gpuHours(p, gpus, valRollouts),
    gives: { trajectories: rollouts },
  };
}

/**
 * GPU-hours of the rollouts at most: `concurrency` rollouts at a time, each within the time budget, the
 * trainer's GPUs held throughout. Updates come on top, so it is a bound on the rollouts alone.
 */
function gpuHours(p: GrpoParams, gpus: number | undefined, valRollouts: Count): Pick<WorkSize, 'gpuHours'> {
  if (!gpus || !valRollouts) return {};
  const rounds = p.steps * Math.ceil((p.batch_size * p.group_size) / p.concurrency);
  const valRounds = Math.ceil(valRollouts.n / p.concurrency);
  const n = { n: (gpus * (rounds + valRounds) * p.time_budget) / 3600, atMost: true };
  return { gpuHours: { n, unit: 'GPU-hours', of: `rollouts at their ${p.time_budget} s budget; updates on top` } };
}
