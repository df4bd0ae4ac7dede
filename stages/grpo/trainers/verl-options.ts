// The verl export's options, the same for a run launched here (`trainer: verl`) and one only written
// (`trainer: verl-export`).
import type { ExportOptions } from '../../../gpu/verl/export.js';
import type { StageContext } from '../../contract.js';
import { checkCpuWeights, trainingLayout, verlRunNames } from '../../shared/verl-job.js';
import { taskCorpus, verlWeightsOf } from '../../shared/verl-weights.js';
import { CONTEXT_TOKENS } from '../index.js';
import { OBSERVATION_CHARS } from '../plans.js';
import { verlShaping } from '../verl-shaping.js';
import type { GrpoRun } from './contract.js';

export async function verlOptions({ ctx, p, train, formula, inputs, lr, release }: GrpoRun): Promise<ExportOptions> {
  const weights = await verlWeightsOf(ctx as StageContext<unknown>, p.policy, () => taskCorpus(train));
  checkCpuWeights(p.verl, weights.model);
  const cpu = p.verl.device === 'cpu';
  return {
    ...weights,
    reward: formula,
    inputs,
    groupSize: p.group_size,
    batchSize: p.batch_size,
    miniBatchSize: p.verl.mini_batch_size,
    steps: p.steps,
    maxTurns: p.max_turns,
    stepTimeoutS: p.step_timeout,
    timeBudgetS: p.time_budget,
    memoryMb: p.memory_mb,
    contextTokens: CONTEXT_TOKENS,
    maskTimeouts: p.mask_timeouts,
    timeoutRule: p.timeout_rule,
    lr,
    clipLow: p.clip.low,
    clipHigh: p.clip.high,
    kl: p.kl,
    temperature: p.temperature,
    advantage: p.advantage,
    lossAggMode: p.loss_agg_mode,
    ...trainingLayout(p.verl),
    ...(cpu ? { cpu: { kvCacheGib: p.verl.kv_cache_gib } } : {}),
    rollout: p.verl.rollout,
    rolloutTp: p.verl.rollout_tp,
    gpuMemoryGib: p.verl.gpu_memory_gib,
    checkpointEvery: p.checkpoint_every,
    keepCheckpoints: p.keep_checkpoints,
    evalEvery: p.eval_every,
    loggers: ctx.tracking?.logger,
    run: verlRunNames(ctx as StageContext<unknown>),
    ...(p.shaping.kind !== 'none' ? { shaping: await verlShaping(ctx, p, train) } : {}),
    ...(p.scaffold === 'mlab'
      ? {
          mlab: {
            tools: p.tools ?? 'domain',
            toolDropout: p.tool_dropout,
            seed: p.seed,
            observationChars: OBSERVATION_CHARS,
          },
        }
      : {}),
    ...(p.prompt_format === 'sandmle-release'
      ? { release: { observationChars: OBSERVATION_CHARS, ...(release ? { options: release } : {}) } }
      : {}),
  };
}
