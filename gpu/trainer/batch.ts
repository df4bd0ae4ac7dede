// The batch `POST /update` receives (schemas/trainer/batch.schema.json): one
// GRPO step's trajectories with their advantages, masks and exact tokens.
// stages/grpo/batch.ts builds it from rollouts.

export interface BatchTrajectory {
  id: string;
  group_id: string;
  task_id: string;
  sample: number;
  reward: number;
  advantage: number;
  /** Per policy turn: G_{i,s} − mean_i G_{i,1} (turn-level credit, equal to the outcome's with no shaping). */
  turn_advantages: number[];
  masked: boolean;
  mask_reason: 'timed_out' | 'unknown' | 'crashed' | null;
  variables: Record<string, number> | null;
  messages: Array<{ role: 'system' | 'user' | 'assistant'; content: string; loss_mask: 0 | 1; logprobs?: number[] }>;
  /** Per assistant turn, the exact tokens (required by a trainer worker on every unmasked trajectory). */
  turns?: BatchTurn[];
}

/** One assistant turn as sampled: the context ids the policy saw, the ids it sampled and their log-probabilities. */
export interface BatchTurn {
  prompt_ids: number[];
  token_ids: number[];
  logprobs: number[];
  loss_mask?: Array<0 | 1>;
}

export type LossAggMode = 'token-mean' | 'seq-mean-token-mean' | 'seq-mean-token-sum-norm';

export interface Batch {
  format: 'mlepipe-grpo-batch/1';
  step: number;
  advantage: 'grpo' | 'drgrpo';
  group_size: number;
  hyper: { lr: number; clip_low: number; clip_high: number; kl: number; temperature: number };
  trajectories: BatchTrajectory[];
  groups: Array<{ group_id: string; mean: number; std: number; zero_signal: boolean }>;
  loss_agg_mode?: LossAggMode;
  /** Which advantage the worker puts on each sampled token: the trajectory's, or its turn's (turn-level credit). */
  advantage_level?: 'trajectory' | 'turn';
  /** The tokenizer and chat template the token ids came from, as the worker's /health names them. */
  tokenizer?: { tokenizer_sha256: string; chat_template_sha256: string };
  micro_batch_size?: number;
  max_grad_norm?: number | null;
}
