// Keeping the conversation inside the policy's context budget (SandMLE §5.4):
// when it is too long, turns whose execution failed are hidden first, oldest
// first, then the oldest turns of any kind. The system prompt, the task and
// the latest turn always stay. The full conversation is still recorded.
// Under sandmle-release the released code's own rule applies instead (releasePrune).
import type { ChatMessage } from '../../llm/client.js';

/** About four characters a token: close enough to budget without a tokenizer. */
export const approxTokens = (messages: readonly ChatMessage[]) =>
  Math.ceil(messages.reduce((n, m) => n + m.content.length + 8, 0) / 4);

/**
 * `head` messages (system, task) are kept; the rest are turns of two messages
 * (assistant reply, observation) and `failed[i]` says whether turn i failed.
 * Returns what the policy is shown and how many turns were hidden.
 */
export function fitContext(
  messages: readonly ChatMessage[],
  head: number,
  failed: readonly boolean[],
  budget: number,
): { messages: ChatMessage[]; dropped: number } {
  const turns: Array<{ msgs: ChatMessage[]; failed: boolean; index: number }> = [];
  for (let i = head, t = 0; i < messages.length; i += 2, t++)
    turns.push({ msgs: messages.slice(i, i + 2), failed: failed[t] ?? false, index: t });
  const keep = new Set(turns.map((t) => t.index));
  const build = () => [...messages.slice(0, head), ...turns.filter((t) => keep.has(t.index)).flatMap((t) => t.msgs)];
  let shown = build();
  const droppable = [...turns.slice(0, -1).filter((t) => t.failed), ...turns.slice(0, -1).filter((t) => !t.failed)];
  for (const t of droppable) {
    if (approxTokens(shown) <= budget) break;
    keep.delete(t.index);
    shown = build();
  }
  return { messages: shown, dropped: turns.length - keep.size };
}

/** Python's len(): code points, where JavaScript counts UTF-16 units. */
const codePoints = (s: string) => s.length - (s.match(/[\uD800-\uDBFF][\uDC00-\uDFFF]/g)?.length ?? 0);

/**
 * The released code's estimate (`_estimate_context_tokens`). It asks tiktoken for the encoding of
 * "qwen3", which tiktoken does not know, so its fallback is what runs: a quarter of the characters of
 * the contents joined by newlines, at least 1.
 */
export const releaseTokens = (messages: readonly ChatMessage[]) =>
  Math.max(1, Math.floor(codePoints(messages.map((m) => m.content).join('\n')) / 4));

const isPair = (a: ChatMessage, b: ChatMessage | undefined) =>
  a.role === 'assistant' &&
  a.content.includes('<tool_call>') &&
  b?.role === 'user' &&
  b.content.includes('<tool_response>');

/**
 * The released code's rule, applied after a turn that did not end the episode (`_run`): over the
 * budget, every tool call whose response says "error" (any case) leaves the conversation with its
 * response; when none does and it is still over, only the system prompt, the task and the last two
 * messages stay. What it returns is the conversation from then on, and how many replies left it.
 */
export function releasePrune(
  messages: readonly ChatMessage[],
  budget: number,
): { messages: ChatMessage[]; removed: number } {
  if (releaseTokens(messages) <= budget || messages.length <= 2) return { messages: [...messages], removed: 0 };
  const kept = messages.slice(0, 2);
  for (let i = 2; i < messages.length; i++) {
    const [m, next] = [messages[i], messages[i + 1]];
    if (isPair(m, next)) {
      if (!next.content.toLowerCase().includes('error')) kept.push(m, next);
      i++;
    } else kept.push(m);
  }
  const replies = (ms: readonly ChatMessage[]) => ms.filter((m) => m.role === 'assistant').length;
  if (kept.length < messages.length) return { messages: kept, removed: replies(messages) - replies(kept) };
  if (releaseTokens(kept) <= budget) return { messages: kept, removed: 0 };
  // Python's messages[:2] + messages[-2:], overlap and all.
  const last = [...messages.slice(0, 2), ...messages.slice(-2)];
  return { messages: last, removed: Math.max(0, replies(messages) - replies(last)) };
}
