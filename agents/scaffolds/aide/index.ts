// AIDE's search over whole solutions: a tree of scripts, each run in the sandbox and then reviewed by the policy
// (a structured answer: bug or not, findings, validation metric). Drafts come first (num_drafts); then, with
// probability debug_prob, a buggy leaf is debugged (while its debug depth is at most max_debug_depth), else the
// best good node is improved. Every written submission is kept; the best good node's is graded. The journal is the
// tree, with AIDE's own serialisation of it beside.
import { publicFilesText, sampleName } from '../public.js';
import { copyFile, mkdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { renderPrompt } from '../../factory/answers.js';
import type { ChatMessage } from '../../llm/client.js';
import { clip, execute, observation } from '../execute.js';
import { budget, newUsage } from '../turns.js';
import type { EpisodeContext, EpisodeResult, Scaffold, TurnRecord } from '../types.js';
import { askCode, type CodeReply } from './code.js';
import { aideJournal } from './journal.js';
import { packagesText, viewJail, type JailView } from './preview.js';
import { askReview, verdict } from './review.js';
import { best, depthOf, memory, nextStep, type JournalNode, type Step } from './search.js';
import { duration } from './time.js';

export type { JournalNode } from './search.js';

/** A node as the turn record every scaffold gives (the policy's history, the trajectory). */
function turnOf(n: JournalNode): TurnRecord {
  const { id, operator, parent, code, observation, exit_code, timed_out, duration_ms, format_ok, metric, buggy } = n;
  return {
    turn: id,
    action: format_ok ? 'code' : 'invalid',
    operator,
    parent,
    code,
    observation,
    exit_code,
    timed_out,
    duration_ms,
    format_ok,
    metric,
    buggy,
  };
}

export const aide: Scaffold = {
  name: 'aide',
  async run(ctx: EpisodeContext): Promise<EpisodeResult> {
    const { limits } = ctx;
    const started = Date.now();
    await mkdir(join(ctx.session.workspace, '.aide'), { recursive: true });
    const jail = await viewJail(ctx.session, Math.min(120_000, limits.timeBudgetMs));
    const system: ChatMessage = { role: 'system', content: systemPrompt(ctx, jail) };
    const nodes: JournalNode[] = [];
    const messages: ChatMessage[] = [system];
    const usage = newUsage();
    let ended: EpisodeResult['ended'] = 'max_turns';
    let error: string | undefined;
    for (let i = 0; i < limits.maxTurns; i++) {
      const b = budget(ctx, started);
      if ('stop' in b) {
        ended = b.stop;
        break;
      }
      const step = nextStep(ctx.aide, nodes, ctx.random);
      const progress = progressText(limits.maxTurns - i, b.left);
      const prompt = stepPrompt(step, nodes, progress, (ctx.aide.dataPreview ?? true) ? jail.preview : '');
      const reply = await askCode(
        ctx,
        {
          scaffold: 'aide',
          purpose: step.operator,
          messages: [system, { role: 'user', content: prompt }],
          turn: i,
          sample: ctx.sample,
          history: nodes.map(turnOf),
          parent: step.parent && { code: step.parent.code, metric: step.parent.metric, buggy: step.parent.buggy },
        },
        usage,
      );
      if ('stop' in reply) {
        ended = reply.stop;
        error = reply.error;
        break;
      }
      messages.push({ role: 'user', content: prompt }, { role: 'assistant', content: reply.text });
      const node = await runNode(ctx, { id: i, step, at: Date.now() - started }, reply, b.left);
      const judged = await judge(ctx, node, usage);
      if (judged) {
        ended = judged.stop;
        error = judged.error;
        break;
      }
      nodes.push(node);
      messages.push({ role: 'user', content: node.observation });
    }
    const chosen = best(nodes);
    return {
      scaffold: 'aide',
      messages,
      turns: nodes.map(turnOf),
      submission: chosen?.submission ? join('.aide', `node_${chosen.id}.csv`) : null,
      ended,
      error,
      dropped_turns: 0,
      usage,
      journal: {
        nodes,
        best: chosen?.id ?? null,
        lower_is_better: ctx.task.lowerIsBetter,
        aide: aideJournal(nodes, started),
      },
    };
  },
};

function systemPrompt(ctx: EpisodeContext, jail: JailView): string {
  const k = ctx.aide.kFold ?? 5;
  return renderPrompt('aide/system', {
    step_timeout: duration(ctx.limits.stepTimeoutMs / 1000),
    description: ctx.task.description.trim(),
    files: publicFilesText(ctx.task),
    sample: sampleName(ctx.task),
    kfold: k > 1 ? `- Evaluate with ${k}-fold cross-validation where that suits the task.\n` : '',
    packages: packagesText(jail.packages),
  });
}

/** The steps and time the search has left, as aira-dojo's prompts give them. */
function progressText(stepsLeft: number, msLeft: number): string {
  return `Steps left in the search, this one included: ${stepsLeft}. Time left: ${duration(msLeft / 1000)}.`;
}

function stepPrompt(step: Step, nodes: readonly JournalNode[], progress: string, preview: string): string {
  const mem = memory(nodes) || '(nothing yet)';
  const overview = preview ? `# Data overview\n\n${preview}\n` : '';
  if (step.operator === 'draft') return renderPrompt('aide/draft', { memory: mem, progress, preview: overview });
  if (step.operator === 'improve')
    return renderPrompt('aide/improve', { memory: mem, code: step.parent!.code, progress });
  return renderPrompt('aide/debug', {
    code: step.parent!.code,
    output: step.parent!.observation,
    progress,
    preview: overview,
  });
}

/** The node a reply makes: its script run with a fresh submission.csv; a written submission is kept under .aide/. */
async function runNode(
  ctx: EpisodeContext,
  at: { id: number; step: Step; at: number },
  reply: CodeReply,
  left: number,
): Promise<JournalNode> {
  const { limits } = ctx;
  const { id, step } = at;
  const submission = join(ctx.session.workspace, 'submission.csv');
  await rm(submission, { force: true });
  const timeout = Math.min(limits.stepTimeoutMs, left);
  const r = await execute(ctx.session, reply.code, id, timeout);
  const wrote = await stat(submission).then(
    (s) => s.isFile(),
    () => false,
  );
  if (wrote) await copyFile(submission, join(ctx.session.workspace, '.aide', `node_${id}.csv`));
  return {
    id,
    parent: step.parent?.id ?? null,
    operator: step.operator,
    plan: reply.plan,
    code: reply.code,
    exit_code: r.timedOut ? null : r.exitCode,
    timed_out: r.timedOut,
    duration_ms: r.durationMs,
    metric: null,
    lower_is_better: ctx.task.lowerIsBetter,
    buggy: true,
    analysis: '',
    debug_depth: depthOf(step, ctx.aide),
    observation: clip(
      observation(r, limits.observationChars, timeout) + (wrote ? '' : '\nno submission.csv was written'),
      2 * limits.observationChars + 200,
    ),
    format_ok: reply.format_ok,
    retries: reply.retries,
    submission: wrote,
    at_ms: at.at,
  };
}

/** Reviews a node and records the verdict on it (aira-dojo: after the format check of its submission). */
async function judge(
  ctx: EpisodeContext,
  node: JournalNode,
  usage: EpisodeResult['usage'],
): Promise<{ stop: EpisodeResult['ended']; error: string } | undefined> {
  const review = await askReview(ctx, node, usage);
  if ('stop' in review) return review;
  let valid = true;
  if (ctx.aide.checkSubmission) {
    const v = node.submission ? await ctx.validate('submission.csv') : undefined;
    valid = v?.ok ?? false;
    const said = v ? (v.ok ? 'the submission is valid' : v.problem) : 'no submission.csv was written';
    node.observation += `\n\nsubmission.csv format check: ${said}`;
  }
  Object.assign(node, verdict(review, node, { valid, reviewDirection: ctx.aide.reviewDirection ?? true }));
  return undefined;
}
