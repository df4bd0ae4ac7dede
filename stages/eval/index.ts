// `uses: eval`: agents solve tasks in the sandbox and are graded the
// MLE-bench way. One item checkpoint per run (task × policy × repeat), so a
// crash loses at most the runs in flight. Outputs: trajectories.jsonl (one
// record per run, docs/agents.md), results.jsonl (report fields per run),
// grading_report.json (MLE-bench's), rows.json (the tables by policy, task,
// win rate and latency) and journals/ for AIDE's search trees.
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { parsePolicy, policyIdentity, type PolicyRef } from '../../agents/policies/index.js';
import { assetsDigest } from '../../core/assets.js';
import { modelIdentity } from '../../core/models.js';
import { ParamError } from '../../core/errors.js';
import { rewardFormula, type RewardInputs } from '../../core/rewards/presets.js';
import { rewardInputIssues } from '../shared/reward-inputs.js';
import schema from '../../schemas/stages/eval.schema.json';
import type { ParamIssue, Stage } from '../contract.js';
import { lazyRun } from '../lazy.js';
import { tasksFolderIssues } from '../shared/tasks.js';
import { type EpisodeLimits, RELEASE_LIMITS, withPreset } from '../shared/limits.js';
import type { ToolChoice } from '../../agents/scaffolds/mlab/tools.js';
import type { PromptFormat } from '../../agents/scaffolds/types.js';
import { TOOLS_BY_NAME } from '../../tools/index.js';

export interface EvalParams {
  tasks?: string;
  split: 'all' | 'train' | 'val';
  limit?: number;
  scaffold: 'react' | 'aide' | 'mlab';
  /** mlab: the diagnostic tools offered (default domain: the task's domain module and the shared one) and the fraction dropped per rollout (default 0). */
  tools?: ToolChoice;
  tool_dropout?: number;
  /** mlab: guidance from a guide stage in needs: (true: any; a name: that stage's) in the teacher's prompt. */
  guidance?: boolean | string;
  /** mlab: mask or paraphrase the named tools' answers (Table 6). */
  intervention?: {
    mode: 'none' | 'mask' | 'paraphrase';
    tools: Exclude<ToolChoice, 'none' | 'domain'>;
    paraphrase_model?: string;
    branch?: string;
  };
  /** mlab: the models: entry the AI actions (edits, Understand File, Reflection, Retrieval) ask; default the policy. */
  action_model?: string;
  policy?: string;
  policies?: string[];
  repeats: number;
  limits: keyof typeof LIMIT_PRESETS;
  max_turns?: number;
  step_timeout?: number;
  time_budget?: number;
  feedback: 'none' | 'score';
  /** react: mlepipe's reply tags (absent) or the released SandMLE code's tool calls. */
  prompt_format?: PromptFormat;
  memory_mb: number;
  context_tokens: number;
  observation_chars: number;
  temperature?: number;
  max_tokens?: number;
  stop?: string[];
  logprobs: boolean;
  seed: number;
  aide: { num_drafts: number; debug_prob: number; max_debug_depth: number };
  reward?: string;
  /** Which grade and which format rule the reward reads (default: the reward preset's). */
  submission?: RewardInputs['submission'];
  format_rule?: RewardInputs['format_rule'];
  concurrency: number;
}

/**
 * Episode limits by preset. paper: SandMLE's T_max and τ_max (the episode
 * budget is ours); release: what the released code runs with.
 */
export const LIMIT_PRESETS = {
  paper: { max_turns: 20, step_timeout: 90, time_budget: 1800 },
  release: RELEASE_LIMITS,
} as const satisfies Record<string, EpisodeLimits>;

/**
 * mlab's `paper` limits are MLToolBench's (Table 2): 50 actions or one hour a rollout. The paper sets no
 * limit on one script, so a script may use what is left of the hour.
 */
export const MLAB_PAPER = { max_turns: 50, step_timeout: 3600, time_budget: 3600 } as const;

/** MLE-bench's wall-clock limit for one agent run on a competition, in seconds. */
export const MLEBENCH_TIME_BUDGET = 86400;

/** The limits a node runs with: each written value, else its preset's. */
export function episodeLimits(
  p: Pick<EvalParams, 'limits' | 'max_turns' | 'step_timeout' | 'time_budget'> & { scaffold?: EvalParams['scaffold'] },
): EpisodeLimits {
  const preset =
    p.scaffold === 'mlab' && (p.limits ?? 'paper') === 'paper' ? MLAB_PAPER : LIMIT_PRESETS[p.limits ?? 'paper'];
  return withPreset(p, preset);
}

/** How policy:/policies: are given wrong (each name itself is checked where it is written). */
function policyListIssues(p: { policy?: string; policies?: string[] }): ParamIssue[] {
  if (p.policy && p.policies)
    return [{ param: ['policy'], message: 'give policy: or policies:, not both', also: ['policies'] }];
  const names = p.policies ?? (p.policy ? [p.policy] : []);
  if (!names.length)
    return [
      {
        param: ['policies'],
        message: 'no policy: give policy: (scripted:forest, or a models: name) or policies:',
        also: ['policy'],
      },
    ];
  if (new Set(names).size !== names.length) return [{ param: ['policies'], message: 'a policy is listed twice' }];
  return [];
}

/** The policy names of a node, checked; a bad one is an error at its position in the file. */
export function policyNames(
  p: { policy?: string; policies?: string[] },
  models: Parameters<typeof parsePolicy>[1],
): Array<{ name: string; ref: PolicyRef }> {
  for (const issue of policyListIssues(p)) throw new ParamError(issue.param, issue.message);
  const names = p.policies ?? [p.policy!];
  return names.map((name, i) => {
    const ref = parsePolicy(name, models);
    if ('error' in ref) throw new ParamError(p.policies ? ['policies', i] : ['policy'], ref.error);
    return { name, ref };
  });
}

/** tools:, tool_dropout, intervention and action_model only mean something to mlab; named tools must exist. */
function toolIssues(
  p: Pick<EvalParams, 'scaffold' | 'tools' | 'tool_dropout' | 'intervention' | 'guidance' | 'action_model'>,
): ParamIssue[] {
  const issues: ParamIssue[] = [];
  for (const k of ['tools', 'tool_dropout', 'intervention'] as const)
    if (p[k] !== undefined && p.scaffold !== 'mlab')
      issues.push({ param: [k], message: `${k}: only the mlab scaffold offers tools (scaffold: ${p.scaffold})` });
  if (p.action_model !== undefined && p.scaffold !== 'mlab')
    issues.push({
      param: ['action_model'],
      message: `action_model: only the mlab scaffold has AI actions (scaffold: ${p.scaffold})`,
    });
  if (p.guidance && p.scaffold !== 'mlab')
    issues.push({
      param: ['guidance'],
      message: `guidance: only the mlab scaffold puts guidance in a teacher's prompt (scaffold: ${p.scaffold})`,
    });
  if (Array.isArray(p.tools))
    p.tools.forEach(
      (n: string, i) =>
        TOOLS_BY_NAME.has(n) ||
        issues.push({ param: ['tools', i], message: `unknown tool "${n}" (mlepipe tools list shows them)` }),
    );
  const iv = p.intervention;
  if (iv && Array.isArray(iv.tools))
    iv.tools.forEach(
      (n: string, i) =>
        TOOLS_BY_NAME.has(n) ||
        issues.push({
          param: ['intervention', 'tools', i],
          message: `unknown tool "${n}" (mlepipe tools list shows them)`,
        }),
    );
  if (iv && iv.mode !== 'none' && p.tools === 'none')
    issues.push({
      param: ['intervention'],
      message: 'tools: none offers no diagnostic tool whose answer could be changed',
      also: ['tools'],
    });
  if (iv?.branch && p.scaffold === 'mlab' && p.tools === 'none')
    issues.push({
      param: ['intervention', 'branch'],
      message: 'tools: none offers no diagnostic tool to branch at',
      also: ['tools'],
    });
  return issues;
}

export const slug = (s: string) => s.replace(/[^A-Za-z0-9._-]+/g, '-');

export const evalStage: Stage<EvalParams> = {
  kind: 'eval',
  // 2: limits: presets, validate feedback, the median milestone inclusive, evaluators run in private/.
  // 3: trajectories record the starter's std (curate's margin) and which guidance a teacher saw.
  // 4: mlab has MLAgentBench's 17 actions and its observation wording, offers the task's domain by default,
  //    and scripted diagnose counts image classes with the vision tool (scripted policies' keys name no code).
  version: 4,
  description: 'Agents (scaffold + policy) solve tasks in the sandbox; MLE-bench medals with confidence intervals.',
  schema,
  keyIgnore: ['concurrency'],
  // MLE-bench gives each agent 24 hours on a competition; the presets' budgets (20 or 30 minutes) are
  // sized for micro tasks. An eval that reads competitions and writes no time_budget gets MLE-bench's
  // (limits: is always filled, with its default, so it cannot say the preset was chosen).
  resolve: (p, { inputKinds }) =>
    inputKinds.includes('mlebench') && p.time_budget === undefined
      ? { ...p, time_budget: MLEBENCH_TIME_BUDGET }
      : { ...p },
  breakdowns: ['policy', 'task', 'win_rate', 'latency', 'steps'],
  sandboxRuns: (p) => p.concurrency,
  flow: {
    gives: ['trajectories'],
    // Tasks (and their split) come from needs: unless tasks: names a folder; a bare `template` policy is a grpo stage's checkpoint.
    takes: (p) => [
      ...(p.tasks ? [] : ['tasks' as const, ...(p.split === 'all' ? [] : ['split' as const])]),
      ...((p.policies ?? [p.policy]).includes('template') ? ['policy' as const] : []),
      ...(p.guidance ? ['guidance' as const] : []),
      ...(p.intervention?.branch ? ['trajectories' as const] : []),
    ],
  },

  check(p, ctx) {
    const issues = [
      ...policyListIssues(p),
      ...tasksFolderIssues(p.tasks, { split: p.split }, ctx.experimentDir),
      ...toolIssues(p),
    ];
    if (p.prompt_format && p.scaffold !== 'react')
      issues.push({
        param: ['prompt_format'],
        message: `prompt_format: only the react scaffold has reply formats (scaffold: ${p.scaffold})`,
        also: ['scaffold'],
      });
    issues.push(...rewardInputIssues(p, ctx.rewards));
    (p.policies ?? (p.policy ? [p.policy] : [])).forEach((name, i) => {
      const ref = parsePolicy(name, ctx.models);
      if ('kind' in ref && ref.kind === 'template' && ref.path && !existsSync(resolve(ctx.experimentDir, ref.path))) {
        issues.push({ param: p.policies ? ['policies', i] : ['policy'], message: `${name}: no such checkpoint file` });
      }
    });
    return issues;
  },

  async keyExtras(p, ctx) {
    const policies = policyNames(p, ctx.models).map(({ ref }, i) => {
      try {
        return policyIdentity(ref, ctx.models, ctx.experimentDir);
      } catch (err) {
        throw new ParamError(p.policies ? ['policies', i] : ['policy'], (err as Error).message);
      }
    });
    // Agents' code and the graders run in Python.
    // The paraphrasing model decides what the agent reads, so its identity is part of the key; other
    // modes never ask it (an ablate over the mode may leave it written in every arm).
    const pm = p.intervention?.mode === 'paraphrase' ? p.intervention.paraphrase_model : undefined;
    const paraphraser = pm ? { openai: modelIdentity(ctx.models[pm]) } : null;
    // The AI actions' model writes the edits the agent runs: its identity is part of the key too.
    const actionModel = p.action_model ? { openai: modelIdentity(ctx.models[p.action_model]) } : null;
    return {
      policies,
      ...(paraphraser ? { paraphraser } : {}),
      ...(actionModel ? { action_model: actionModel } : {}),
      prompts: await assetsDigest([`agents/prompts/${p.scaffold}`, ...(p.scaffold === 'mlab' ? ['tools/py'] : [])]),
      reward: p.reward ? rewardFormula(p.reward, ctx.rewards) : null,
      python: await ctx.python(),
    };
  },

  run: lazyRun(() => import('./run.js')),
  // The reward and what it reads are functions of the recorded runs: changing only them rescores.
  rescore: {
    params: ['reward', 'submission', 'format_rule'],
    run: async (ctx, from) => (await import('./rescore.js')).rescore(ctx, from),
  },
};
