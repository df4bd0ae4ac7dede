// The Hydra overrides of verl.trainer.main_ppo for an exported run. Batch sizes are derived so that
// verl's config checks pass: one optimiser step per batch unless mini_batch_size
// splits it (batch.ts: in prompts, as verl counts it), micro-batches
// of one sequence per GPU (multi-turn trajectories are long), and a batch of
// batch_size × group_size sequences that the GPUs divide evenly. Keys that moved
// between releases: docs/training.md.
import { existsSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { InternalError, ParamError } from '../../core/errors.js';
import type { ModelSpec } from '../../core/models.js';
import { miniBatchProblem, ppoMiniBatchSize } from './batch.js';
import { cpuPpoOverrides } from './cpu.js';
import { layoutOverrides, rolloutTp, type Layout } from './scale.js';

/** The verl release the export is written for and checked against (python/verl.lock). */
export const VERL_VERSION = '0.9.1';

/**
 * What verl loads as actor_rollout_ref.model.path: the entry's path:, a model folder relative to
 * the experiment file made absolute (the job runs in another folder), anything else as written (a
 * hub id such as Qwen/Qwen3-8B, or a folder on the cluster's shared storage). The config check
 * (pipelines/validate, verlWeights) refuses an entry without path: before any node runs.
 */
export function verlModelPath(m: ModelSpec, experimentDir: string): string {
  if (m.path === undefined) throw new InternalError(`models entry ${m.model} reached the verl export without path:`);
  if (isAbsolute(m.path)) return m.path;
  const local = resolve(experimentDir, m.path);
  return m.path.startsWith('.') || existsSync(local) ? local : m.path;
}

/**
 * What every exported job imports as verl loads (VERL_USE_EXTERNAL_MODULES, in each Ray worker's
 * environment): it registers the mlepipe_turn estimator, which only a shaped run's overrides name.
 */
export const TURN_CREDIT_MODULE = 'mlepipe_verl.turn_credit';

export interface OverrideOptions {
  /** The weights' path or hub id (verlModelPath), never the entry's label. */
  model: string;
  /** The tokenizer's folder, where it is not the weights' (a worker checkpoint keeps it beside them). */
  tokenizer?: string;
  groupSize: number;
  batchSize: number;
  /** Trajectories per optimiser update (gpu/verl/batch.ts); absent: the whole batch. */
  miniBatchSize?: number;
  steps: number;
  maxTurns: number;
  lr: number;
  clipLow: number;
  clipHigh: number;
  kl: number;
  temperature: number;
  advantage: 'grpo' | 'drgrpo';
  /** The agent loop rows without an agent_name run (agent_loop.yaml's entry); default mlepipe_react. */
  agentLoop?: string;
  /** Turn-level shaping: the per-turn estimator mlepipe_turn (mlepipe_verl/turn_credit.py) instead of verl's grpo. */
  turnCredit?: boolean;
  lossAggMode: string;
  nodes: number;
  gpusPerNode: number;
  rollout: 'vllm' | 'sglang';
  /** Tensor parallelism of a rollout replica; default: rolloutTp(model, gpusPerNode). */
  rolloutTp?: number;
  promptLength: number;
  responseLength: number;
  checkpointEvery: number;
  /** Checkpoints verl keeps besides the newest (trainer.max_actor_ckpt_to_keep is this + 1); 0: all. */
  keepCheckpoints?: number;
  evalEvery: number;
  /** The per-GPU layout (gpu/verl/scale.ts); without one (a model of unknown shape) verl's defaults apply. */
  layout?: Layout;
  /** Project settings' logger: (wandb adds verl's W&B tracker). */
  loggers?: readonly ('tensorboard' | 'wandb')[];
  /** cpu: a CPU smoke run on vLLM's CPU build (gpu/verl/cpu.ts), one worker, no GPU layout. */
  device?: 'cuda' | 'cpu';
  /** The names of the run on W&B (verlRunOverrides); default mlepipe / grpo. */
  run?: RunNames;
}

/** What verl names a run by: W&B's project and run name (trainer.project_name, trainer.experiment_name). */
export interface RunNames {
  project: string;
  name: string;
}

/**
 * A string as one quoted value of a Hydra override, whatever it holds. Unquoted, Hydra's grammar takes `=`, `,`
 * and brackets as syntax (a node id such as `rl@lr=1e-6,seed=2`); inside single quotes only a quote and the
 * backslashes before a quote or the closing one are escapes, and OmegaConf still resolves `${…}` there, so that
 * is escaped too (a backslash run before it doubled, as OmegaConf reads it).
 */
export function hydraString(s: string): string {
  const body = s.replace(/(\\*)(\$\{|'|$)/g, (_m, bs: string, t: string) => {
    if (t === "'") return `${bs}${bs}\\'`;
    if (t === '${') return `${bs}${bs}\\\${`;
    return bs + bs;
  });
  return `'${body}'`;
}

/** The overrides that name the run: EXPERIMENT/NODE[@variant] in the experiment's project, as the local trainers name theirs. */
export function verlRunOverrides(r: RunNames): Record<string, string> {
  return { 'trainer.project_name': hydraString(r.project), 'trainer.experiment_name': hydraString(r.name) };
}

/** The same, as override strings. */
export const runNameOverrides = (r: RunNames): string[] =>
  Object.entries(verlRunOverrides(r)).map(([k, v]) => `${k}=${v}`);

/**
 * verl's trackers (verl/utils/tracking.py): its console lines, the file logger whose
 * VERL_FILE_LOGGER_PATH mlepipe reads metrics.jsonl from, TensorBoard (into
 * TENSORBOARD_DIR, which the job is given), and W&B when the settings ask for it.
 */
export function verlLoggerOverride(loggers: readonly string[] = []): string {
  const list = ['console', 'file', 'tensorboard', ...(loggers.includes('wandb') ? ['wandb'] : [])];
  return `trainer.logger=[${list.map((l) => `'${l}'`).join(',')}]`;
}

/** Replaces or adds Hydra overrides by key (Hydra refuses a key given twice; a `+` key is the same key). */
export function withOverrides(base: readonly string[], extra: Record<string, string>): string[] {
  const key = (k: string) => k.replace(/^\+/, '');
  const keys = new Set(Object.keys(extra).map(key));
  return [
    ...base.filter((o) => !keys.has(key(o.slice(0, o.indexOf('='))))),
    ...Object.entries(extra).map(([k, v]) => `${k}=${v}`),
  ];
}

export function verlOverrides(o: OverrideOptions): string[] {
  const gpus = o.nodes * o.gpusPerNode;
  if ((o.batchSize * o.groupSize) % gpus !== 0) {
    throw new ParamError(
      ['batch_size'],
      `verl needs batch_size × group_size (${o.batchSize} × ${o.groupSize}) to be a multiple of the GPUs (${o.nodes} × ${o.gpusPerNode} = ${gpus})`,
    );
  }
  const batch = { batchSize: o.batchSize, groupSize: o.groupSize, gpus, miniBatchSize: o.miniBatchSize };
  const mini = miniBatchProblem(batch);
  if (mini) throw new ParamError(['verl', 'mini_batch_size'], mini);
  const tp = o.rolloutTp ?? rolloutTp(o.model, o.gpusPerNode);
  if (tp > o.gpusPerNode || o.gpusPerNode % tp !== 0) {
    throw new ParamError(
      ['verl', 'rollout_tp'],
      `a rollout replica of ${tp} GPUs must divide a node's ${o.gpusPerNode} GPUs (verl would make ${Math.floor(gpus / tp)} replicas)`,
    );
  }
  return [
    `algorithm.adv_estimator=${o.turnCredit ? 'mlepipe_turn' : 'grpo'}`,
    `algorithm.norm_adv_by_std_in_grpo=${o.advantage === 'grpo'}`,
    'algorithm.use_kl_in_reward=false',
    // Relative paths: the job runs in the export's folder (the Ray job's working directory).
    'data.train_files=data/train.parquet',
    'data.val_files=data/val.parquet',
    `data.train_batch_size=${o.batchSize}`,
    `data.max_prompt_length=${o.promptLength}`,
    `data.max_response_length=${o.responseLength}`,
    'data.filter_overlong_prompts=true',
    'data.truncation=error',
    'data.return_raw_chat=true',
    `actor_rollout_ref.model.path=${o.model}`,
    ...(o.tokenizer ? [`actor_rollout_ref.model.tokenizer_path=${o.tokenizer}`] : []),
    `actor_rollout_ref.actor.optim.lr=${o.lr}`,
    `actor_rollout_ref.actor.ppo_mini_batch_size=${ppoMiniBatchSize(batch)}`,
    'actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=1',
    'actor_rollout_ref.actor.ppo_epochs=1',
    `actor_rollout_ref.actor.loss_agg_mode=${o.lossAggMode}`,
    `actor_rollout_ref.actor.clip_ratio_low=${o.clipLow}`,
    `actor_rollout_ref.actor.clip_ratio_high=${o.clipHigh}`,
    `actor_rollout_ref.actor.use_kl_loss=${o.kl > 0}`,
    `actor_rollout_ref.actor.kl_loss_coef=${o.kl}`,
    'actor_rollout_ref.actor.entropy_coeff=0',
    'actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu=1',
    `actor_rollout_ref.rollout.name=${o.rollout}`,
    'actor_rollout_ref.rollout.mode=async',
    `actor_rollout_ref.rollout.tensor_model_parallel_size=${tp}`,
    'actor_rollout_ref.rollout.data_parallel_size=1',
    'actor_rollout_ref.rollout.pipeline_model_parallel_size=1',
    `actor_rollout_ref.rollout.n=${o.groupSize}`,
    `actor_rollout_ref.rollout.temperature=${o.temperature}`,
    'actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=1',
    `actor_rollout_ref.rollout.multi_turn.max_assistant_turns=${o.maxTurns}`,
    'actor_rollout_ref.rollout.agent.agent_loop_config_path=agent_loop.yaml',
    `actor_rollout_ref.rollout.agent.default_agent_loop=${o.agentLoop ?? 'mlepipe_react'}`,
    'reward.custom_reward_function.path=reward_fn.py',
    'reward.custom_reward_function.name=compute_score',
    `trainer.nnodes=${o.nodes}`,
    `trainer.n_gpus_per_node=${o.gpusPerNode}`,
    `trainer.total_training_steps=${o.steps}`,
    `trainer.save_freq=${o.checkpointEvery}`,
    // Each save also writes the actor's Hugging Face weights (global_step_N/actor/huggingface), which the node
    // hands on as its checkpoint: the sharded model and optimizer are what verl resumes from, and no worker loads them.
    "actor_rollout_ref.actor.checkpoint.save_contents=['model','optimizer','extra','hf_model']",
    `trainer.max_actor_ckpt_to_keep=${o.keepCheckpoints ? o.keepCheckpoints + 1 : 'null'}`,
    `trainer.test_freq=${o.evalEvery > 0 ? o.evalEvery : -1}`,
    // verl validates before the first step by default; without a val split the export's val rows are the training tasks.
    `trainer.val_before_train=${o.evalEvery > 0}`,
    'trainer.default_local_dir=checkpoints',
    verlLoggerOverride(o.loggers),
    ...runNameOverrides(o.run ?? { project: 'mlepipe', name: 'grpo' }),
    ...(o.device === 'cpu'
      ? cpuPpoOverrides(o.promptLength + o.responseLength)
      : o.layout
        ? layoutOverrides(o.layout)
        : []),
  ];
}
