// AIDE's search over whole solutions: a tree of scripts, each run in the
// sandbox. Drafts come first (num_drafts); then, with probability debug_prob,
// a failed leaf is debugged (at most max_debug_depth times in a row), else
// the best working node is improved. Every node's submission is kept; the
// one with the best validation score is graded. journal.json is the tree.
import { publicFilesText, sampleName } from '../public.js';
import { copyFile, mkdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { extractBlock, renderPrompt } from '../../factory/answers.js';
import type { ChatMessage } from '../../llm/client.js';
import { clip, execute, observation } from '../execute.js';
import { ask, budget, newUsage } from '../turns.js';
import type { EpisodeContext, EpisodeResult, Scaffold, TurnRecord } from '../types.js';

type Operator = 'draft' | 'improve' | 'debug';

export interface JournalNode {
  id: number;
  parent: number | null;
  operator: Operator;
  plan: string;
  code: string;
  exit_code: number | null;
  timed_out: boolean;
  duration_ms: number;
  metric: number | null;
  buggy: boolean;
  /** Debug steps in a row that led to this node. */
  debug_depth: number;
  observation: string;
  /** The reply held exactly one python block. */
  format_ok: boolean;
}

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

/** The last `validation score: X` the script printed. */
export function parseMetric(stdout: string): number | null {
  const all = [...stdout.matchAll(/validation score[^:\n]*:\s*(-?\d+(?:\.\d+)?(?:e[-+]?\d+)?)/gi)];
  const v = all.length ? Number(all[all.length - 1][1]) : NaN;
  return Number.isFinite(v) ? v : null;
}

export const aide: Scaffold = {
  name: 'aide',
  async run(ctx: EpisodeContext): Promise<EpisodeResult> {
    const { limits } = ctx;
    const started = Date.now();
    const system: ChatMessage = {
      role: 'system',
      content: renderPrompt('aide/system', {
        step_timeout: Math.round(limits.stepTimeoutMs / 1000),
        description: ctx.task.description.trim(),
        files: publicFilesText(ctx.task),
        sample: sampleName(ctx.task),
      }),
    };
    const nodes: JournalNode[] = [];
    const messages: ChatMessage[] = [system];
    const usage = newUsage();
    await mkdir(join(ctx.session.workspace, '.aide'), { recursive: true });
    let ended: EpisodeResult['ended'] = 'max_turns';
    let error: string | undefined;
    for (let i = 0; i < limits.maxTurns; i++) {
      const b = budget(ctx, started);
      if ('stop' in b) {
        ended = b.stop;
        break;
      }
      const { operator, parent } = nextStep(ctx, nodes);
      const prompt = stepPrompt(operator, parent, nodes);
      const reply = await ask(
        ctx,
        {
          scaffold: 'aide',
          purpose: operator,
          messages: [system, { role: 'user', content: prompt }],
          turn: i,
          sample: ctx.sample,
          history: nodes.map(turnOf),
          parent: parent && { code: parent.code, metric: parent.metric, buggy: parent.buggy },
        },
        usage,
      );
      if ('stop' in reply) {
        ended = reply.stop;
        error = reply.error;
        break;
      }
      messages.push({ role: 'user', content: prompt }, { role: 'assistant', content: reply.text });
      const node = await runNode(ctx, { id: i, operator, parent }, reply.text, b.left);
      nodes.push(node);
      messages.push({ role: 'user', content: node.observation });
    }
    const chosen = best(nodes, ctx.task.lowerIsBetter);
    return {
      scaffold: 'aide',
      messages,
      turns: nodes.map(turnOf),
      submission: chosen ? join('.aide', `node_${chosen.id}.csv`) : null,
      ended,
      error,
      dropped_turns: 0,
      usage,
      journal: { nodes, best: chosen?.id ?? null, lower_is_better: ctx.task.lowerIsBetter },
    };
  },
};

/** The working node with the best validation score (one without a score only while no other has one). */
function best(nodes: readonly JournalNode[], lowerIsBetter: boolean): JournalNode | undefined {
  const better = (a: number, b: number) => (lowerIsBetter ? a < b : a > b);
  return nodes
    .filter((n) => !n.buggy)
    .reduce<JournalNode | undefined>(
      (b, n) => (!b || (n.metric !== null && (b.metric === null || better(n.metric, b.metric))) ? n : b),
      undefined,
    );
}

/** What the prompts show of the search so far: one line per working node. */
function memory(nodes: readonly JournalNode[]): string {
  return (
    nodes
      .filter((n) => !n.buggy)
      .map(
        (n) =>
          `- node ${n.id} (${n.operator}): ${n.plan.split('\n')[0].slice(0, 160)} → validation score ${n.metric ?? 'not printed'}`,
      )
      .join('\n') || '(none yet)'
  );
}

/** The search policy: drafts first, then debug a failed leaf with probability debug_prob, else improve the best. */
function nextStep(ctx: EpisodeContext, nodes: readonly JournalNode[]): { operator: Operator; parent?: JournalNode } {
  const opts = ctx.aide;
  if (nodes.filter((n) => n.operator === 'draft').length < opts.numDrafts) return { operator: 'draft' };
  const leaves = nodes.filter(
    (n) => n.buggy && n.debug_depth < opts.maxDebugDepth && !nodes.some((c) => c.parent === n.id),
  );
  if (leaves.length && ctx.random() < opts.debugProb)
    return { operator: 'debug', parent: leaves[Math.floor(ctx.random() * leaves.length)] };
  const parent = best(nodes, ctx.task.lowerIsBetter);
  return parent ? { operator: 'improve', parent } : { operator: 'draft' };
}

function stepPrompt(operator: Operator, parent: JournalNode | undefined, nodes: readonly JournalNode[]): string {
  if (operator === 'draft') return renderPrompt('aide/draft', { memory: memory(nodes) });
  if (operator === 'improve')
    return renderPrompt('aide/improve', {
      metric: String(parent!.metric ?? 'not printed'),
      memory: memory(nodes),
      code: parent!.code,
    });
  return renderPrompt('aide/debug', { code: parent!.code, output: parent!.observation });
}

/**
 * The node a reply makes: its script run with a fresh submission.csv, the metric it printed, and whether it
 * failed; a working node's submission is kept under .aide/ for the final choice.
 */
async function runNode(
  ctx: EpisodeContext,
  step: { id: number; operator: Operator; parent?: JournalNode },
  text: string,
  left: number,
): Promise<JournalNode> {
  const { limits } = ctx;
  const { id, operator, parent } = step;
  const code = extractBlock(text, 'python') ?? extractBlock(text, '');
  const plan = text.slice(0, text.indexOf('```') >= 0 ? text.indexOf('```') : undefined).trim();
  const node: JournalNode = {
    id,
    parent: parent?.id ?? null,
    operator,
    plan,
    code: code ?? '',
    exit_code: null,
    timed_out: false,
    duration_ms: 0,
    metric: null,
    buggy: true,
    debug_depth: operator === 'debug' ? parent!.debug_depth + 1 : 0,
    observation: '',
    format_ok: code !== null,
  };
  if (code === null) {
    node.observation = 'format error: the reply must hold exactly one ```python block';
    return node;
  }
  const submission = join(ctx.session.workspace, 'submission.csv');
  await rm(submission, { force: true });
  const timeout = Math.min(limits.stepTimeoutMs, left);
  const r = await execute(ctx.session, code, id, timeout);
  const wrote = await stat(submission).then(
    (s) => s.isFile(),
    () => false,
  );
  Object.assign(node, {
    exit_code: r.timedOut ? null : r.exitCode,
    timed_out: r.timedOut,
    duration_ms: r.durationMs,
    metric: parseMetric(r.stdout),
  });
  node.buggy = r.timedOut || r.exitCode !== 0 || !wrote;
  node.observation = clip(
    observation(r, limits.observationChars, timeout) +
      (wrote || r.timedOut || r.exitCode ? '' : '\nno submission.csv was written'),
    2 * limits.observationChars + 200,
  );
  if (!node.buggy) await copyFile(submission, join(ctx.session.workspace, '.aide', `node_${id}.csv`));
  return node;
}
