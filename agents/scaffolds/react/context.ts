// Keeping the conversation inside the policy's context budget (SandMLE §5.4):
// when it is too long, turns whose execution failed are hidden first, oldest
// first, then the oldest turns of any kind. The system prompt, the task and
// the latest turn always stay. The full conversation is still recorded.
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
