// `uses: grpo`: trajectory-wise GRPO (SandMLE §3.4.3–3.4.5). Each step
// samples batch_size tasks, rolls out group_size trajectories per task
// through the ReAct scaffold in the sandbox, scores them with the reward
// formula, computes group advantages with masking, and updates the policy:
// in process (the template policy), on a trainer worker over HTTP, or not
// at all (verl-export writes a run directory). Every step is an item
// checkpoint holding its trajectories, metrics and the policy after it, so a
// killed run resumes after its last finished step.
import type { StdKind, TimeoutRule } from '../../agents/grpo/advantages.js';
import { parsePolicy, policyIdentity } from '../../agents/policies/index.js';
import { freshCheckpoint } from '../../agents/policies/template/index.js';
import { assetsDigest } from '../../core/assets.js';
import { rewardFormula } from '../../core/rewards/presets.js';
import schema from '../../schemas/stages/grpo.schema.json';
import type { ParamIssue, Stage } from '../contract.js';
import { lazyRun } from '../lazy.js';
import { tasksFolderIssues } from '../eval/tasks.js';
import type { LossAggMode } from './batch.js';

export interface GrpoParams {
  policy: string;
  trainer: 'template' | 'worker' | 'verl-export' | 'verl';
  worker_url?: string;
  verl: { nodes: number; gpus_per_node: number; rollout: 'vllm' | 'sglang'; ray_address?: string; sandbox_host: string; python: string };
  reward: string;
  tasks?: string;
  split: 'all' | 'train' | 'val';
  val_split: 'all' | 'train' | 'val';
  group_size: number;
  batch_size: number;
  steps: number;
  max_turns: number;
  step_timeout: number;
  time_budget: number;
  memory_mb: number;
  temperature: number;
  lr?: number;
  clip: { low: number; high: number };
  kl: number;
  advantage: 'grpo' | 'drgrpo';
  mask_timeouts: 'drop' | 'drop-after' | 'keep';
  timeout_rule: TimeoutRule;
  std: StdKind;
  loss_agg_mode: LossAggMode;
  advantage_level: 'trajectory' | 'turn';
  epochs: number;
  eval_every: number;
  checkpoint_every: number;
  seed: number;
  concurrency: number;
}

function policyIssues(p: GrpoParams, models: Parameters<typeof parsePolicy>[1]): ParamIssue[] {
  if (p.trainer === 'template') {
    return p.policy === 'template' ? [] : [{ param: ['policy'], message: `trainer: template trains the template policy; policy: ${p.policy} needs trainer: worker`, also: ['trainer'] }];
  }
  const ref = parsePolicy(p.policy, models);
  const also = ['trainer'];
  if ('error' in ref || ref.kind !== 'openai') return [{ param: ['policy'], message: `trainer: ${p.trainer} needs policy: a models: entry (the model the worker serves)${'error' in ref ? `: ${ref.error}` : ''}`, also }];
  // A provider: worker entry is started by the node itself.
  if (p.trainer === 'worker' && !p.worker_url && models[p.policy].provider !== 'worker' && !models[p.policy].base_url) return [{ param: ['worker_url'], message: 'trainer: worker needs worker_url: (or a base_url on the policy\'s models: entry)', also: ['trainer', 'policy'] }];
  return [];
}

// Validation is only needed when eval_every asks for it, or for the verl export.
export const validates = (p: GrpoParams) => p.eval_every > 0 || p.trainer === 'verl-export' || p.trainer === 'verl';

export const grpo: Stage<GrpoParams> = {
  kind: 'grpo',
  version: 1,
  description: 'Trajectory-wise GRPO with milestone rewards (template policy on CPU, a trainer worker, or a verl export).',
  schema,
  keyIgnore: ['concurrency'],
  breakdowns: ['curve'],
  flow: {
    gives: ['policy', 'trajectories'],
    takes: (p) => (p.tasks ? [] : ['tasks', ...(p.split !== 'all' || (validates(p) && p.val_split !== 'all') ? ['split' as const] : [])]),
  },

  check(p, ctx) {
    const splits = { split: p.split, ...(validates(p) ? { val_split: p.val_split } : {}) };
    // Whether val_split matters follows from eval_every and trainer.
    const folder = tasksFolderIssues(p.tasks, splits, ctx.experimentDir).map((i) => (i.param[0] === 'val_split' ? { ...i, also: [...(i.also ?? []), 'eval_every', 'trainer'] } : i));
    return [...policyIssues(p, ctx.models), ...folder];
  },

  async keyExtras(p, ctx) {
    const formula = rewardFormula(p.reward, ctx.rewards);
    const policy = p.trainer === 'template' ? { template: freshCheckpoint().features } : policyIdentity(parsePolicy(p.policy, ctx.models) as never, ctx.models);
    // The kit's code is what the template policy runs; the ReAct prompts are what a model reads.
    const prompts = await assetsDigest(['agents/prompts/react']);
    // Rollouts run agents' code and graders in Python; a verl export only writes files.
    const python = p.trainer === 'verl-export' ? {} : { python: await ctx.python() };
    return { formula, policy, kit: policyIdentity({ kind: 'scripted', agent: 'random' }, ctx.models), prompts, ...python };
  },

  run: lazyRun(() => import('./run.js')),
};
