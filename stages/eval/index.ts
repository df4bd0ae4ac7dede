// `uses: eval`: agents solve tasks in the sandbox and are graded the
// MLE-bench way. One item checkpoint per run (task × policy × repeat), so a
// crash loses at most the runs in flight. Outputs: trajectories.jsonl (one
// record per run, docs/agents.md), results.jsonl (report fields per run),
// grading_report.json (MLE-bench's), rows.json (the tables by policy, task,
// win rate and latency) and journals/ for AIDE's search trees.
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { parsePolicy, policyIdentity } from '../../agents/policies/index.js';
import type { ToolChoice } from '../../agents/scaffolds/mlab/tools.js';
import type { ReleaseParam } from '../../agents/scaffolds/react/release-options.js';
import type { PromptFormat } from '../../agents/scaffolds/types.js';
import { assetsDigest } from '../../core/assets.js';
import { ParamError } from '../../core/errors.js';
import { modelIdentity } from '../../core/models.js';
import { rewardFormula, type RewardInputs } from '../../core/rewards/presets.js';
import schema from '../../schemas/stages/eval.schema.json';
import type { Stage } from '../contract.js';
import { lazyRun } from '../lazy.js';
import { evalSize } from './size.js';
import { releaseKeyExtras, releaseParamIssues } from '../shared/release-checkout.js';
import { rewardInputIssues } from '../shared/reward-inputs.js';
import { tasksFolderIssues } from '../shared/tasks.js';
import { MLEBENCH_TIME_BUDGET, type LIMIT_PRESETS } from './limits.js';
import type { AideParams } from '../../agents/scaffolds/aide/presets.js';
import { policyListIssues, policyNames } from './policy-names.js';
import { toolIssues } from './tool-issues.js';

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
  /** sandmle-release: which of the release's other rules apply, and its texts from a checkout. */
  release?: ReleaseParam;
  memory_mb: number;
  context_tokens: number;
  observation_chars: number;
  temperature?: number;
  max_tokens?: number;
  stop?: string[];
  logprobs: boolean;
  seed: number;
  aide: AideParams;
  reward?: string;
  /** Which grade and which format rule the reward reads (default: the reward preset's). */
  submission?: RewardInputs['submission'];
  format_rule?: RewardInputs['format_rule'];
  concurrency: number;
}

export const slug = (s: string) => s.replace(/[^A-Za-z0-9._-]+/g, '-');

export const evalStage: Stage<EvalParams> = {
  kind: 'eval',
  // 2: limits: presets, validate feedback, the median milestone inclusive, evaluators run in private/.
  // 3: trajectories record the starter's std (curate's margin) and which guidance a teacher saw.
  // 4: mlab has MLAgentBench's 17 actions and its observation wording, offers the task's domain by default,
  //    and scripted diagnose counts image classes with the vision tool (scripted policies' keys name no code).
  // 5: a score that is not finite is kept (valid, placed as MLE-bench places it) and rewarded so; the release's
  //    evaluator output is read as json.loads reads it (bare NaN and Infinity).
  // 6: policy rows and metrics carry attainable_max, the success rate the tasks' build checks allow at best.
  // 7: aide follows AIDE's rules: a review by the policy decides bug and metric, a data preview and the jail's
  //    packages in the prompt, blocks merged and three asks, debug depth <= max; aide.preset.
  version: 7,
  description: 'Agents (scaffold + policy) solve tasks in the sandbox; MLE-bench medals with confidence intervals.',
  schema,
  keyIgnore: ['concurrency'],
  // MLE-bench gives each agent 24 hours on a competition; the presets' budgets (20 or 30 minutes) are
  // sized for micro tasks. An eval that reads competitions and writes no time_budget gets MLE-bench's
  // (limits: is always filled, with its default, so it cannot say the preset was chosen).
  // An aide preset brings its own upstream's total time.
  resolve: (p, { inputKinds }) =>
    inputKinds.includes('mlebench') &&
    p.time_budget === undefined &&
    !(p.scaffold === 'aide' && (p.aide as AideParams | undefined)?.preset)
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
    issues.push(...rewardInputIssues(p, ctx.rewards), ...releaseParamIssues(p, ctx.experimentDir));
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
      ...(await releaseKeyExtras(p, ctx)),
    };
  },

  size: evalSize,
  run: lazyRun(() => import('./run.js')),
  // The reward and what it reads are functions of the recorded runs: changing only them rescores.
  rescore: {
    params: ['reward', 'submission', 'format_rule'],
    run: async (ctx, from) => (await import('./rescore.js')).rescore(ctx, from),
  },
};
