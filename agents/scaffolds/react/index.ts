// The ReAct scaffold SandMLE trains with: the policy reasons, then runs one
// python block, validates the submission, or answers; each execution's
// observation goes back as the next user message. Ends on an answer, after
// T_max turns, or when the episode's time budget is spent. The reply format
// is mlepipe's tags (parse.ts) or the released code's tool calls (release.ts);
// the released format follows the release's other rules as its options say
// (release-options.ts).
import type { ChatMessage } from '../../llm/client.js';
import { agentWorkspace } from '../../../sandbox/workspace.js';
import { execute, observation } from '../execute.js';
import type { EpisodeContext, EpisodeResult, Scaffold, TurnRecord } from '../types.js';
import { ask, budget, newUsage } from '../turns.js';
import { fitContext, releasePrune } from './context.js';
import { parseReply, type ParsedReply, type Action } from './parse.js';
import { reactMessages } from './prompt.js';
import { releaseObservation, releaseParser, storedReply, type ReleaseReply } from './release.js';
import { releaseExecution } from './release-observation.js';
import { RELEASE_DEFAULTS, type ReleaseOptions } from './release-options.js';
import { releaseTimeout, scoreAnswer, scoreRefusal } from './release-text.js';

/** One episode as it goes: what the policy has been sent and what it did. */
interface Episode {
  ctx: EpisodeContext;
  release: boolean;
  /** sandmle-release: which of the release's rules apply. */
  options?: ReleaseOptions;
  stepSeconds: number;
  /** Every reply and observation, as recorded. */
  messages: ChatMessage[];
  /** The release's pruning: the conversation the policy is sent, which loses turns for good. */
  conversation: ChatMessage[];
  /** Every message with each reply as the policy generated it: what a token record of the samples continues. */
  sampled: ChatMessage[];
  turns: TurnRecord[];
  usage: EpisodeResult['usage'];
  dropped: number;
  submission: string | null;
  ended: EpisodeResult['ended'];
  error?: string;
}

type Reply = Extract<Awaited<ReturnType<typeof ask>>, { text: string }>;
type TurnBase = Omit<TurnRecord, 'action' | 'observation'>;

export const react: Scaffold = {
  name: 'react',
  async run(ctx: EpisodeContext): Promise<EpisodeResult> {
    const started = Date.now();
    const release = ctx.promptFormat === 'sandmle-release';
    const parse: (text: string) => ParsedReply & Partial<ReleaseReply> = release
      ? releaseParser(ctx.task.id)
      : parseReply;
    const stepSeconds = Math.round(ctx.limits.stepTimeoutMs / 1000);
    const options = release ? (ctx.release ?? RELEASE_DEFAULTS) : undefined;
    const datasetDir = `${agentWorkspace(ctx.session)}/public`;
    const opening = reactMessages(
      ctx.task,
      { maxTurns: ctx.limits.maxTurns, stepSeconds },
      options && { options, datasetDir },
    );
    const ep: Episode = {
      ctx,
      release,
      options,
      stepSeconds,
      messages: opening,
      conversation: [...opening],
      sampled: [...opening],
      turns: [],
      usage: newUsage(),
      dropped: 0,
      submission: null,
      ended: 'max_turns',
    };
    for (let t = 0; t < ctx.limits.maxTurns; t++) {
      const b = budget(ctx, started);
      if ('stop' in b) {
        ep.ended = b.stop;
        break;
      }
      const reply = await askTurn(ep, t);
      if ('stop' in reply) {
        ep.ended = reply.stop;
        ep.error = reply.error;
        break;
      }
      if (await takeTurn(ep, t, reply, parse(reply.text), b.left)) {
        ep.ended = 'answer';
        break;
      }
      // The release prunes after a turn that did not end the episode; the turn still counts.
      if (options?.pruning === 'release') {
        const pruned = releasePrune(ep.conversation, ctx.limits.contextTokens);
        ep.conversation = pruned.messages;
        ep.dropped += pruned.removed;
      }
    }
    if (options?.pruning === 'release') markPruned(ep);
    // Out of turns or time without an answer: the last submission written is graded, as MLE-bench does.
    return {
      scaffold: 'react',
      messages: ep.messages,
      turns: ep.turns,
      submission: ep.submission ?? 'submission.csv',
      ended: ep.ended,
      error: ep.error,
      dropped_turns: ep.dropped,
      usage: ep.usage,
    };
  },
};

/** Sends the conversation, trimmed to the context budget, and asks for the next reply. */
async function askTurn(ep: Episode, t: number) {
  let shown = [...ep.conversation];
  if (ep.options?.pruning !== 'release') {
    const fit = fitContext(ep.messages, 2, ep.turns.map(failed), ep.ctx.limits.contextTokens);
    ep.dropped = Math.max(ep.dropped, fit.dropped);
    shown = fit.messages;
  }
  return ask(
    ep.ctx,
    {
      scaffold: 'react',
      purpose: 'step',
      messages: shown,
      // The whole conversation as sampled, pruned turns and cut text included: what a token record (the verl loop's)
      // continues; where it differs from what the policy is shown, the record ends there.
      transcript: ep.sampled,
      turn: t,
      sample: ep.ctx.sample,
      history: ep.turns,
      ...(ep.release ? { promptFormat: 'sandmle-release' as const } : {}),
    },
    ep.usage,
  );
}

/**
 * Marks the turns whose reply the release's pruning took out of the conversation for good: the release computes its
 * format rate and its share of timed-out tool responses from the conversation it ends with.
 */
function markPruned(ep: Episode): void {
  const live = new Set(ep.conversation);
  const replies = ep.messages.filter((m) => m.role === 'assistant');
  ep.turns.forEach((turn, i) => {
    if (replies[i] && !live.has(replies[i])) turn.pruned = true;
  });
}

/** A message for the record and for the conversation the policy is sent. */
function say(ep: Episode, message: ChatMessage, sampled = message): void {
  ep.messages.push(message);
  ep.conversation.push(message);
  ep.sampled.push(sampled);
}

/** Records the reply and its action and sends back its observation; true when the episode ends on an answer. */
async function takeTurn(
  ep: Episode,
  t: number,
  reply: Reply,
  parsed: ParsedReply & Partial<ReleaseReply>,
  left: number,
): Promise<boolean> {
  const { action, formatOk, toolCall, answers } = parsed;
  // What the policy generated is kept on the turn; the conversation goes on from the cut reply, as the release's does.
  const stored = ep.options?.cutToolResponse ? storedReply(reply.text) : reply.text;
  say(ep, { role: 'assistant', content: stored }, { role: 'assistant', content: reply.text });
  // The release answers every tool call with a tool response, and none to a reply without one.
  const base: TurnBase = {
    turn: t,
    format_ok: formatOk,
    ...(stored !== reply.text ? { raw_reply: reply.text } : {}),
    ...(ep.release ? { tool_response: toolCall === true } : {}),
    exit_code: null,
    timed_out: false,
    duration_ms: 0,
    ...(reply.choice ? { choice: reply.choice } : {}),
    ...(reply.logprobs ? { logprobs: reply.logprobs } : {}),
    ...(reply.tokens ? { tokens: reply.tokens } : {}),
  };
  if (action.kind === 'answer') {
    ep.submission = action.path;
    ep.turns.push({ ...base, action: 'answer', observation: `submitted ${action.path}` });
    return true;
  }
  const turn = await act(ep, action, base, toolCall === true, left);
  ep.turns.push(turn);
  say(ep, {
    role: 'user',
    content: ep.release && toolCall ? releaseObservation(turn.observation) : turn.observation,
  });
  // The release acts on the call, then ends on the answer in the same reply.
  return answers === true;
}

/** Carries out an action other than an answer: the turn it makes, its observation included. */
async function act(
  ep: Episode,
  action: Exclude<Action, { kind: 'answer' }>,
  base: TurnBase,
  toolCall: boolean,
  left: number,
): Promise<TurnRecord> {
  if (action.kind === 'invalid') {
    // A call the release cannot make is answered in its words; a reply without a call gets mlepipe's format error.
    return { ...base, action: 'invalid', observation: toolCall ? action.reason : `format error: ${action.reason}` };
  }
  if (action.kind === 'validate') {
    const t0 = Date.now();
    const v = await ep.ctx.validate(action.path);
    return {
      ...base,
      action: 'validate',
      observation: validationText(v, action.path, ep.release),
      duration_ms: Date.now() - t0,
      ...(v.ok ? { evaluation: v.result } : {}),
    };
  }
  const timeout = Math.min(ep.ctx.limits.stepTimeoutMs, left);
  const { session } = ep.ctx;
  const r = await execute(session, action.code, base.turn, timeout);
  return {
    ...base,
    action: 'code',
    code: action.code,
    observation:
      ep.release && r.timedOut
        ? releaseTimeout(ep.stepSeconds)
        : ep.options?.observations === 'release'
          ? releaseExecution(r, session.workspace, agentWorkspace(session))
          : observation(r, ep.ctx.limits.observationChars, timeout),
    exit_code: r.timedOut ? null : r.exitCode,
    timed_out: r.timedOut,
    duration_ms: r.durationMs,
  };
}

/** What a validate turn shows; the release's Score tool always shows the score and thresholds. */
function validationText(v: Awaited<ReturnType<EpisodeContext['validate']>>, path: string, release: boolean): string {
  if (release) return v.ok ? scoreAnswer(v.result, path) : scoreRefusal(v.problem, path, v.said);
  if (!v.ok) return `invalid submission: ${v.problem}`;
  return v.feedback ? `valid: ${path} ${v.feedback}` : `valid: ${path} has the submission's format (it was not scored)`;
}

function failed(t: TurnRecord): boolean {
  return t.action === 'invalid' || (t.action === 'code' && (t.timed_out || t.exit_code !== 0));
}
