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
import { rewardFormula, type RewardInputs } from '../../core/rewards/presets.js';
import { rewardInputIssues } from '../shared/reward-inputs.js';
import { releaseKeyExtras, releaseParamIssues } from '../shared/release-checkout.js';
import type { ReleaseParam } from '../../agents/scaffolds/react/release-options.js';
import { type EpisodeLimits, RELEASE_LIMITS, withPreset } from '../shared/limits.js';
import schema from '../../schemas/stages/grpo.schema.json';
import type { Need, ParamIssue, PreflightContext, Stage } from '../contract.js';
import { verlNeeds } from '../shared/verl-needs.js';
import { lazyRun } from '../lazy.js';
import { grpoSize } from './size.js';
import { tasksFolderIssues } from '../shared/tasks.js';
import type { LossAggMode } from './batch.js';
import type { Schedule } from '../shared/schedule.js';
import type { ToolChoice } from '../../agents/scaffolds/mlab/tools.js';
import type { ShapingKind } from '../../agents/shaping/types.js';
import type { ChatTemplate } from '../../agents/shaping/prompt-scorer.js';
import { TOOLS_BY_NAME } from '../../tools/index.js';
import { selectIssues } from './select.js';
import { miniBatchProblem } from '../../gpu/verl/batch.js';

export interface ShapingParams {
  kind: ShapingKind;
  scorer: string;
  /** How an openai scorer entry is asked: prompt log-probabilities on /completions, or a trainer worker's /score. */
  scorer_api?: 'completions' | 'score';
  /** The chat template a completions scorer's prompts are rendered with. */
  template?: ChatTemplate;
  /** A models: entry that writes the bank's summaries (procedural without one). */
  summarizer?: string;
  beta?: number;
  kappa?: number | [number, number];
  pilot_steps: number;
  references: number;
  summaries: 'full' | 'reduced';
  shuffle: boolean;
  max_length: number;
}

/** The scaffold's and shaping's problems that show before running: tools without mlab, a scorer that cannot be reached, beta against kappa, what shaping cannot go with. */
function shapingIssues(p: GrpoParams, models: Parameters<typeof parsePolicy>[1]): ParamIssue[] {
  const s = p.shaping;
  const out: ParamIssue[] = [];
  if (p.scaffold === 'react' && p.tool_dropout > 0)
    out.push({
      param: ['tool_dropout'],
      message: "tool_dropout removes mlab's diagnostic tools; it needs scaffold: mlab",
      also: ['scaffold'],
    });
  if (p.scaffold === 'react' && p.tools !== undefined)
    out.push({
      param: ['tools'],
      message: 'only the mlab scaffold offers tools (scaffold: react)',
      also: ['scaffold'],
    });
  if (Array.isArray(p.tools))
    p.tools.forEach(
      (n: string, i) =>
        TOOLS_BY_NAME.has(n) ||
        out.push({ param: ['tools', i], message: `unknown tool "${n}" (mlepipe tools list shows them)` }),
    );
  if (p.scaffold === 'mlab' && p.prompt_format === 'sandmle-release')
    out.push({
      param: ['prompt_format'],
      message: 'prompt_format: sandmle-release is a ReAct reply format; scaffold: mlab has its own actions',
      also: ['scaffold'],
    });
  if (p.scaffold === 'mlab' && p.trainer === 'template')
    out.push({
      param: ['scaffold'],
      message: 'the template policy writes ReAct replies; scaffold: mlab needs a models: policy (trainer: worker)',
      also: ['trainer'],
    });
  const verl = p.trainer === 'verl' || p.trainer === 'verl-export';
  if (s.kind === 'none') return out;
  if (s.beta !== undefined && s.kappa !== undefined)
    out.push({
      param: ['shaping', 'beta'],
      message: 'give beta (as written) or kappa (a pilot calibrates beta to it), not both',
    });
  if (Array.isArray(s.kappa) && s.kappa[0] > s.kappa[1])
    out.push({ param: ['shaping', 'kappa'], message: `the range [${s.kappa.join(', ')}] is empty: write [low, high]` });
  if (s.summarizer !== undefined && !models[s.summarizer])
    out.push({ param: ['shaping', 'summarizer'], message: `no model named ${s.summarizer} in models:` });
  if (verl) return [...out, ...verlShapingIssues(s, models)];
  if (s.scorer === 'worker') {
    if (p.trainer !== 'worker')
      out.push({
        param: ['shaping', 'scorer'],
        message:
          "scorer: worker scores with the policy's own trainer worker, so it needs trainer: worker; name a models: entry to score a template policy's turns",
        also: ['trainer'],
      });
  } else if (!models[s.scorer]) {
    out.push({ param: ['shaping', 'scorer'], message: `no model named ${s.scorer} in models: (or write worker)` });
  } else if (models[s.scorer].provider !== 'worker' && !models[s.scorer].base_url) {
    // OpenAI's own API echoes no prompt log-probabilities and has no /score.
    out.push({
      param: ['shaping', 'scorer'],
      message: `model ${s.scorer} has no base_url: a scorer is a provider: worker entry, an OpenAI-compatible server that echoes prompt log-probabilities (vLLM), or a running trainer worker (scorer_api: score)`,
    });
  }
  // Only a completions scorer renders a chat template; a worker applies the model's own.
  const completions =
    s.scorer !== 'worker' &&
    models[s.scorer]?.provider === 'openai' &&
    (s.scorer_api ?? 'completions') === 'completions';
  if (s.template !== undefined && !completions)
    out.push({
      param: ['shaping', 'template'],
      message:
        'template renders the prompts of an openai scorer asked through /completions; this scorer applies its own chat template',
    });
  if (s.scorer_api !== undefined && (s.scorer === 'worker' || models[s.scorer]?.provider !== 'openai'))
    out.push({
      param: ['shaping', 'scorer_api'],
      message: 'scorer_api chooses how an openai scorer entry is asked; this scorer is a trainer worker',
    });
  return out;
}

/**
 * SPICE and TIPS on verl: the agent loop scores each episode's calls on the job's own rollout servers, and the
 * sandbox service keeps the bank (gpu/verl/service-shaping.ts). What needs the whole step's batch or a
 * model beside the job stays on the worker trainer.
 */
function verlShapingIssues(s: ShapingParams, models: Parameters<typeof parsePolicy>[1]): ParamIssue[] {
  // β's pilot runs inside the job (gpu/verl/service-shaping.ts): its first pilot_steps steps.
  const out: ParamIssue[] = [];
  const on = (param: string, message: string) => out.push({ param: ['shaping', param], message, also: ['trainer'] });
  if (s.summarizer !== undefined && models[s.summarizer]?.provider === 'worker')
    on(
      'summarizer',
      `on verl the sandbox service asks the summarizer over HTTP, and nobody starts a provider: worker entry for it: serve ${s.summarizer} (mlepipe serve) and name an openai entry with its base_url`,
    );
  if (s.scorer !== 'worker')
    on(
      'scorer',
      "on verl the job's own rollout servers score the calls (the weights that sampled them); leave scorer: out",
    );
  return out;
}

export interface GrpoParams {
  policy: string;
  trainer: 'template' | 'worker' | 'verl-export' | 'verl';
  worker_url?: string;
  verl: {
    nodes: number;
    gpus_per_node: number;
    rollout: 'vllm' | 'sglang';
    /** Trajectories per optimiser update on verl (gpu/verl/batch.ts); absent: the whole step. */
    mini_batch_size?: number;
    rollout_tp?: number;
    gpu_memory_gib: number;
    device: 'cuda' | 'cpu';
    kv_cache_gib: number;
    stall_timeout_s?: number;
    ray_address?: string;
    sandbox_host: string;
    python?: string;
  };
  reward: string;
  /** Which grade and which format rule the reward reads (default: the reward preset's). */
  submission?: RewardInputs['submission'];
  format_rule?: RewardInputs['format_rule'];
  tasks?: string;
  split: 'all' | 'train' | 'val';
  val_split: 'all' | 'train' | 'val';
  group_size: number;
  batch_size: number;
  steps: number;
  /** Written only: resolve() has turned it into max_turns, step_timeout and time_budget. */
  limits?: keyof typeof GRPO_LIMITS;
  max_turns: number;
  scaffold: 'react' | 'mlab';
  tools?: ToolChoice;
  tool_dropout: number;
  step_timeout: number;
  time_budget: number;
  memory_mb: number;
  /** The ReAct reply format: mlepipe's tags (absent) or the released SandMLE code's tool calls. */
  prompt_format?: 'mlepipe' | 'sandmle-release';
  /** sandmle-release: which of the release's other rules apply, and its texts from a checkout. */
  release?: ReleaseParam;
  temperature: number;
  lr?: number;
  schedule: Schedule;
  clip: { low: number; high: number };
  kl: number;
  advantage: 'grpo' | 'drgrpo';
  mask_timeouts: 'drop' | 'drop-after' | 'keep';
  timeout_rule: TimeoutRule;
  std: StdKind;
  loss_agg_mode: LossAggMode;
  advantage_level: 'trajectory' | 'turn';
  shaping: ShapingParams;
  epochs: number;
  eval_every: number;
  checkpoint_every: number;
  keep_checkpoints: number;
  /** Which step's weights the node hands on (absent: the last). */
  select?: 'last' | 'best-val';
  gradient_checkpointing: boolean;
  seed: number;
  concurrency: number;
}

function policyIssues(p: GrpoParams, models: Parameters<typeof parsePolicy>[1]): ParamIssue[] {
  if (p.trainer === 'template') {
    return p.policy === 'template'
      ? []
      : [
          {
            param: ['policy'],
            message: `trainer: template trains the template policy; policy: ${p.policy} needs trainer: worker`,
            also: ['trainer'],
          },
        ];
  }
  const ref = parsePolicy(p.policy, models);
  const also = ['trainer'];
  if ('error' in ref || ref.kind !== 'openai')
    return [
      {
        param: ['policy'],
        message: `trainer: ${p.trainer} needs policy: a models: entry (the model the worker serves)${'error' in ref ? `: ${ref.error}` : ''}`,
        also,
      },
    ];
  // A provider: worker entry is started by the node itself.
  if (p.trainer === 'worker' && !p.worker_url && models[p.policy].provider !== 'worker' && !models[p.policy].base_url)
    return [
      {
        param: ['worker_url'],
        message: "trainer: worker needs worker_url: (or a base_url on the policy's models: entry)",
        also: ['trainer', 'policy'],
      },
    ];
  return [];
}

/** The context of one trajectory in tokens: the prompt and every turn, as the rollouts and the verl export bound it. */
export const CONTEXT_TOKENS = 32_768;

/**
 * Episode limits by preset. paper: mlepipe's grpo defaults (SandMLE's T_max and τ_max, a shorter episode
 * budget than eval's); release: what the released training code runs with.
 */
export const GRPO_LIMITS = {
  paper: { max_turns: 20, step_timeout: 90, time_budget: 900 },
  release: RELEASE_LIMITS,
} as const satisfies Record<string, EpisodeLimits>;

/** The written params with limits: and mask_timeouts filled in; a node that names no preset keeps its former params. */
export function resolveGrpo(written: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const p = written as Partial<GrpoParams>;
  const preset = GRPO_LIMITS[p.limits ?? 'paper'];
  // select: last is what a node without select: does; dropping it keeps the node's key.
  const { select, ...rest } = written;
  return {
    ...(select === 'last' ? rest : written),
    ...withPreset(p, preset),
    // The release masks its timed-out episodes after the advantages are computed.
    mask_timeouts: p.mask_timeouts ?? (p.timeout_rule === 'release' ? 'drop-after' : 'drop'),
  };
}

/** Release rules a grpo node cannot honour, each at its own param. */
function releaseIssues(p: GrpoParams, rewards: Readonly<Record<string, string>>): ParamIssue[] {
  const out: ParamIssue[] = [];
  const release = p.prompt_format === 'sandmle-release';
  const verl = p.trainer === 'verl' || p.trainer === 'verl-export';
  // The export runs the release's ReAct in the sandbox service; turn shaping finds mlepipe's code blocks only.
  if (verl && release && p.shaping.kind !== 'none')
    out.push({
      param: ['prompt_format'],
      message: `prompt_format: sandmle-release is exported without turn shaping: shaping scores the code blocks of mlepipe's reply format`,
      also: ['shaping'],
    });
  out.push(...rewardInputIssues(p, rewards));
  if (p.timeout_rule === 'release' && p.scaffold !== 'react')
    out.push({
      param: ['timeout_rule'],
      message: `timeout_rule: release counts ReAct tool responses (scaffold: ${p.scaffold})`,
      also: ['scaffold'],
    });
  return out;
}

/** The policy a grpo node trains, and the models its shaping asks (stages/contract.ts, Need). */
export function grpoNeeds(p: GrpoParams, ctx: PreflightContext): Need[] {
  const policy = { name: p.policy, param: ['policy'] };
  const needs: Need[] = [];
  if (p.trainer === 'verl') needs.push(...verlNeeds(p.verl, ctx, policy));
  else if (p.trainer === 'verl-export')
    needs.push({ what: 'model', model: p.policy, param: ['policy'], use: 'elsewhere' });
  else if (p.trainer === 'worker' && p.worker_url) {
    // A running worker serves the policy: it must answer; a worker entry's weights are its business.
    needs.push({ what: 'trainer worker that answers', url: p.worker_url, param: ['worker_url'] });
    const own = ctx.models[p.policy]?.provider === 'worker';
    needs.push({ what: 'model', model: p.policy, param: ['policy'], use: own ? 'elsewhere' : 'endpoint' });
  } else if (p.trainer === 'worker') needs.push({ what: 'model', model: p.policy, param: ['policy'], use: 'endpoint' });
  if (p.shaping.kind === 'none') return needs;
  if (p.shaping.scorer !== 'worker' && p.trainer !== 'verl' && p.trainer !== 'verl-export')
    needs.push({ what: 'model', model: p.shaping.scorer, param: ['shaping', 'scorer'], use: 'endpoint' });
  if (p.shaping.summarizer)
    needs.push({ what: 'model', model: p.shaping.summarizer, param: ['shaping', 'summarizer'], use: 'endpoint' });
  return needs;
}

/** verl's rules for the mini-batch (gpu/verl/batch.ts), where verl trains; other trainers take one update a step. */
function miniBatchIssues(p: GrpoParams): ParamIssue[] {
  if (p.trainer !== 'verl' && p.trainer !== 'verl-export') return [];
  const why = miniBatchProblem({
    batchSize: p.batch_size,
    groupSize: p.group_size,
    // A CPU run trains on one worker (stages/shared/verl-job.ts trainingLayout).
    gpus: p.verl.device === 'cpu' ? 1 : p.verl.nodes * p.verl.gpus_per_node,
    miniBatchSize: p.verl.mini_batch_size,
  });
  return why ? [{ param: ['verl', 'mini_batch_size'], message: why, also: ['batch_size', 'group_size'] }] : [];
}

// Validation is only needed when eval_every asks for it, or for the verl export.
export const validates = (p: GrpoParams) => p.eval_every > 0 || p.trainer === 'verl-export' || p.trainer === 'verl';

export const grpo: Stage<GrpoParams> = {
  kind: 'grpo',
  // 2: mlab rollouts as eval's version 4 (17 actions, their observations, tools: domain by default).
  // 3: rewards of scores that are not finite as eval's version 5; timeout_rule release keeps an answer on the
  //    last call.
  version: 3,
  description:
    'Trajectory-wise GRPO with milestone rewards (template policy on CPU, a trainer worker, or a verl export).',
  schema,
  resolve: resolveGrpo,
  // Which checkpoints stay in the item store changes no output.
  keyIgnore: ['concurrency', 'keep_checkpoints'],
  breakdowns: ['curve'],
  // As its rollouts run (run.ts, verl-run.ts).
  sandboxRuns: (p) => Math.min(p.concurrency, p.batch_size * p.group_size),
  flow: {
    gives: ['policy', 'trajectories'],
    takes: (p) =>
      p.tasks
        ? []
        : ['tasks', ...(p.split !== 'all' || (validates(p) && p.val_split !== 'all') ? ['split' as const] : [])],
  },

  check(p, ctx) {
    const splits = { split: p.split, ...(validates(p) ? { val_split: p.val_split } : {}) };
    // Whether val_split matters follows from eval_every and trainer.
    const folder = tasksFolderIssues(p.tasks, splits, ctx.experimentDir).map((i) =>
      i.param[0] === 'val_split' ? { ...i, also: [...(i.also ?? []), 'eval_every', 'trainer'] } : i,
    );
    return [
      ...policyIssues(p, ctx.models),
      ...shapingIssues(p, ctx.models),
      ...releaseIssues(p, ctx.rewards),
      ...selectIssues(p),
      ...releaseParamIssues(p, ctx.experimentDir),
      ...miniBatchIssues(p),
      ...folder,
    ];
  },

  preflight: grpoNeeds,

  placement(p) {
    if (p.trainer === 'verl' && p.verl.device === 'cpu')
      return "a verl Ray job on this CPU with vLLM's CPU build (ray.address, else a Ray head on this machine)";
    if (p.trainer === 'verl')
      return `a verl Ray job on ${p.verl.nodes} × ${p.verl.gpus_per_node} GPUs (ray.address, else a Ray head on this machine)`;
    if (p.trainer === 'verl-export')
      return `a verl run directory for ${p.verl.nodes} × ${p.verl.gpus_per_node} GPUs (written, not launched)`;
    return undefined;
  },

  async keyExtras(p, ctx) {
    const formula = rewardFormula(p.reward, ctx.rewards);
    const policy =
      p.trainer === 'template'
        ? { template: freshCheckpoint().features }
        : policyIdentity(parsePolicy(p.policy, ctx.models) as never, ctx.models);
    // The kit's code is what the template policy runs; the ReAct prompts are what a model reads.
    const prompts = await assetsDigest([
      `agents/prompts/${p.scaffold}`,
      ...(p.scaffold === 'mlab' ? ['tools/py'] : []),
    ]);
    // Rollouts run agents' code and graders in Python; a verl export only writes files.
    const python = p.trainer === 'verl-export' ? {} : { python: await ctx.python() };
    // A scorer that is a models: entry scores every step: its identity is part of the result.
    const scorer =
      p.shaping.kind !== 'none' && p.shaping.scorer !== 'worker'
        ? { scorer: policyIdentity({ kind: 'openai', model: p.shaping.scorer }, ctx.models) }
        : {};
    // A model that writes the bank's summaries decides the references: it and its prompt are part of the result.
    const summarizer =
      p.shaping.kind !== 'none' && p.shaping.summarizer && ctx.models[p.shaping.summarizer]
        ? {
            summarizer: policyIdentity({ kind: 'openai', model: p.shaping.summarizer }, ctx.models),
            summarizer_prompt: await assetsDigest(['agents/prompts/shaping']),
          }
        : {};
    return {
      formula,
      policy,
      kit: policyIdentity({ kind: 'scripted', agent: 'random' }, ctx.models),
      prompts,
      ...python,
      ...scorer,
      ...summarizer,
      ...(await releaseKeyExtras(p, ctx)),
    };
  },

  size: grpoSize,
  run: lazyRun(() => import('./run.js')),
};
