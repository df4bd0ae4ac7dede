// How a GRPO step's batch becomes verl's optimiser updates (verl 0.9.1). A step rolls out batch_size
// prompts × group_size (rollout.n) trajectories, one sequence each. actor.ppo_mini_batch_size is counted in
// prompts and multiplied by rollout.n (ray_trainer.py), then spread over the data-parallel ranks, which must
// take equal shares of it (engine_workers.py: mini-batch % DP size); each rank cuts its share of the step into
// whole mini-batches (tensordict_utils.make_iterator: its share % its part of a mini-batch), and a static
// batch also needs train_batch_size ≥ ppo_mini_batch_size (workers/config/actor.py). Without a mini-batch the
// whole step is one update. The same rules are checked on the config (stages/grpo) and on the export.

export interface StepBatch {
  /** Prompts (tasks) a step: data.train_batch_size. */
  batchSize: number;
  /** Trajectories per prompt: actor_rollout_ref.rollout.n. */
  groupSize: number;
  /** GPUs of the job (nodes × gpus_per_node; one for a CPU run). */
  gpus: number;
  /** Trajectories per optimiser update; absent: the whole step. */
  miniBatchSize?: number;
}

/**
 * What verl would refuse about the mini-batch, in the config's words, or undefined. The GPU rule is the
 * data-parallel one with every GPU a rank: Ulysses sequence parallelism (chosen by the export's layout)
 * groups GPUs into fewer ranks, so a mini-batch the GPUs divide is one every layout's ranks divide.
 */
export function miniBatchProblem(b: StepBatch): string | undefined {
  const m = b.miniBatchSize;
  if (m === undefined) return undefined;
  const step = b.batchSize * b.groupSize;
  if (m > step)
    return `mini_batch_size (${m} trajectories) is more than a step rolls out (batch_size × group_size = ${b.batchSize} × ${b.groupSize} = ${step}); verl refuses a mini-batch above train_batch_size, and the whole step is already one update`;
  if (m % b.groupSize !== 0)
    return `mini_batch_size (${m}) must be a multiple of group_size (${b.groupSize}): verl counts ppo_mini_batch_size in prompts and multiplies it by rollout.n`;
  if (step % m !== 0)
    return `mini_batch_size (${m}) must divide the step's ${step} trajectories (batch_size × group_size): verl cuts each step into whole mini-batches`;
  if (m % b.gpus !== 0)
    return `mini_batch_size (${m}) must be a multiple of the GPUs (${b.gpus}): each update spreads its trajectories evenly over the data-parallel ranks`;
  return undefined;
}

/** actor.ppo_mini_batch_size, in prompts: the mini-batch's trajectories over group_size, or the whole step's prompts. */
export const ppoMiniBatchSize = (b: StepBatch): number =>
  b.miniBatchSize === undefined ? b.batchSize : b.miniBatchSize / b.groupSize;
