// Which turns are tool calls, and where the call sits in the reply. Turn-level
// credit scores only the call's tokens (the reasoning before it is context), and
// the controls group calls by category: MLToolBench's diagnostic tools against
// the scaffold's own editing and execution actions.
import type { ChatMessage } from '../llm/client.js';
import type { TurnRecord } from '../scaffolds/types.js';

export type CallCategory = 'diagnostic' | 'execution';

export interface ToolCall {
  /** Index of the turn (and of the assistant message) in the trajectory. */
  turn: number;
  category: CallCategory;
  /** The conversation before the reply: h_{s−1}. The turn's own observation and what follows are not in it. */
  history: ChatMessage[];
  /** The reply's text before the call (reasoning), context for the call's tokens. */
  prefix: string;
  /** The call's text: the only tokens that are scored. */
  call: string;
  /** The conversation after the turn's observation: h_s (TIPS's post-interaction history). */
  after: ChatMessage[];
  /** The reply's token ids as sampled, when the policy's endpoint gave them. */
  sampled?: number[];
}

/** Turns that reached the environment with an action; answers end the episode and invalid replies called nothing. */
const CALL_ACTIONS = new Set(['code', 'validate', 'action', 'tool']);

/** The span of the reply that is the call, by the scaffold's format; null when none can be found. */
export function callSpan(scaffold: string, reply: string): { start: number; end: number } | null {
  if (scaffold === 'mlab') {
    const m = /^[ \t]*\**Action\**[ \t]*:/m.exec(reply);
    return m ? { start: m.index, end: reply.length } : null;
  }
  // ReAct: the one fenced code block or <validate> tag after the reasoning.
  const think = /<think>[\s\S]*?<\/think>/.exec(reply);
  const from = think ? think.index + think[0].length : 0;
  const rest = reply.slice(from);
  const m = /```(?:python|py)?[ \t]*\n[\s\S]*?```|<validate>[\s\S]*?<\/validate>/.exec(rest);
  return m ? { start: from + m.index, end: from + m.index + m[0].length } : null;
}

/** Every tool-call turn of a trajectory with its history, reasoning prefix and call text. */
export function toolCalls(ep: {
  scaffold: string;
  messages: readonly ChatMessage[];
  turns: readonly TurnRecord[];
}): ToolCall[] {
  const replies = ep.messages.flatMap((m, i) => (m.role === 'assistant' ? [i] : []));
  const out: ToolCall[] = [];
  ep.turns.forEach((t, s) => {
    const at = replies[s];
    if (at === undefined || !CALL_ACTIONS.has(t.action)) return;
    const reply = ep.messages[at].content;
    const span = callSpan(ep.scaffold, reply);
    if (!span) return;
    // The observation is the user message right after the reply.
    const obsEnd = ep.messages[at + 1]?.role === 'user' ? at + 2 : at + 1;
    out.push({
      turn: s,
      category: t.action === 'tool' ? 'diagnostic' : 'execution',
      history: ep.messages.slice(0, at),
      prefix: reply.slice(0, span.start),
      call: reply.slice(span.start, span.end),
      after: ep.messages.slice(0, obsEnd),
      ...(t.tokens ? { sampled: t.tokens.token_ids } : {}),
    });
  });
  return out;
}
