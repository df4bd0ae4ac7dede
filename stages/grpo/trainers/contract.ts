// What a GRPO trainer is to the stage. Template and worker take the run's steps here, one at a time: the stage
// samples each step's rollouts and hands the trainer their batch. verl runs every step inside one job of its own,
// so opening it runs the job, and what comes back is the node's result.
import type { ReleaseOptions } from '../../../agents/scaffolds/react/release-options.js';
import type { Policy } from '../../../agents/policies/types.js';
import type { RewardInputs } from '../../../core/rewards/presets.js';
import type { TrainerClient } from '../../../gpu/trainer/client.js';
import type { StageContext, StageResult } from '../../contract.js';
import type { TaskRef } from '../../shared/tasks.js';
import type { Batch, BatchOptions, Rollout } from '../batch.js';
import type { GrpoParams } from '../index.js';

/** What run() works out once for every trainer. */
export interface GrpoRun {
  readonly ctx: StageContext<GrpoParams>;
  readonly p: GrpoParams;
  readonly train: TaskRef[];
  readonly val: TaskRef[];
  /** The reward formula, expanded. */
  readonly formula: string;
  /** What the reward reads besides its formula. */
  readonly inputs: RewardInputs;
  /** The peak learning rate (the trainer's default when `lr:` is not written). */
  readonly lr: number;
  /** sandmle-release: the release's rules the rollouts follow, and its texts when a checkout gave them. */
  readonly release?: ReleaseOptions;
}

/** A trainer that takes the run's steps in this process. */
export interface StepTrainer {
  /** Whether the policy is a model behind an endpoint (the jails then preload what its code imports). */
  readonly servesModel: boolean;
  /** The policy that samples step k's rollouts (k ≤ 0: the shaping pilot's batches, before any update). */
  policy(k: number): Policy;
  /** What stops a step's rollouts: the run's signal, and for a worker started here, its exit. */
  signal(): AbortSignal;
  /** Before step k runs here (not when an earlier attempt finished it): starts what it trains on. */
  prepare(k: number): Promise<void>;
  /** The trainer worker, for a scorer on the policy's own weights (opened now if need be); none for the template. */
  policyWorker(): Promise<TrainerClient | undefined>;
  /** What the batch carries for this trainer (a worker's exact tokens). */
  exact(): BatchOptions['exact'];
  /** Step k's update on its batch, kept in the step's folder `dir`; its figures (numbers go into the curve). */
  step(
    k: number,
    batch: Batch,
    rollouts: readonly Rollout[],
    lr: number,
    dir: string,
  ): Promise<Record<string, unknown>>;
  /** Step k failed with `err`: the error to report. */
  failure(k: number, err: unknown): Promise<unknown>;
  /** Step k was just run and recorded in the item store; `selected`: the step best-val hands on so far, to keep. */
  recorded(k: number, selected?: number): Promise<void>;
  /** Step k is finished (now or by an earlier attempt, in `dir`): the policy from here on is the one it saved. */
  finished(k: number, dir: string): Promise<void>;
  /** After the last step: the node's checkpoint, the weights step k (finished) saved. */
  publish(k: number): Promise<void>;
  stop(): Promise<void>;
}

export interface Trainer {
  /** `lr` when the experiment does not write it. */
  readonly defaultLr: number;
  /** Starts the trainer: one that takes steps here returns itself; a job returns the node's result once run. */
  open(run: GrpoRun): Promise<StepTrainer | { result: StageResult }>;
}
