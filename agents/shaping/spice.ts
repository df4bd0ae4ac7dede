// SPICE (MLToolBench Eq. 1): how much a verified solution's summary raises the
// likelihood of the tool call the policy sampled. Both branches teacher-force
// the same call tokens after the same history and reasoning; the conditioned
// branch adds one training-only user message with the summary. The turn's
// observation and everything after it are never shown to either branch.
import type { ChatMessage } from '../llm/client.js';
import { toolCalls, type ToolCall } from './calls.js';
import { mean, type Scorer, type ScoreItem, type TurnScore } from './types.js';
import { InternalError } from '../../core/errors.js';

/** The training-only message that carries one reference to the scorer (never to the acting policy). */
export function referenceMessage(summary: string): ChatMessage {
  return {
    role: 'user',
    content:
      `SPICE_REFERENCE:\n${summary.trim()}\n\n` +
      'SPICE_INSTRUCTION: The reference above describes a verified solution of this task. With it in mind, give the next tool call of the trajectory.',
  };
}

/**
 * d = 1/(K|a|) Σ_c Σ_u [log q(a_u | h, c, a_<u) − log q(a_u | h, a_<u)]: the mean over references and
 * call tokens of the per-token log-likelihood difference. `conditioned[k]` holds the call's token
 * log-probabilities under reference k, `plain` those without any.
 */
export function spiceScore(conditioned: readonly (readonly number[])[], plain: readonly number[]): number {
  if (!conditioned.length || !plain.length)
    throw new InternalError('SPICE needs at least one reference and one call token');
  for (const lp of conditioned)
    if (lp.length !== plain.length)
      throw new InternalError(`a branch scored ${lp.length} call tokens, the plain one ${plain.length}`);
  return mean(conditioned.map((lp) => mean(lp.map((x, u) => x - plain[u]))));
}

const item = (c: ToolCall, extra: ChatMessage[], exact: boolean): ScoreItem => ({
  messages: [...c.history, ...extra],
  prefix: c.prefix,
  reply: c.call,
  ...(exact && c.sampled ? { sampled: c.sampled } : {}),
});

/**
 * Eq. 1 on every tool-call turn of one trajectory. No reference: every call scores null (zero shaping).
 * A conditioned branch that does not fit the scorer's context is left out of the mean; when the plain
 * branch or every conditioned one overflows, the call is unscored. `exact`: the scorer shares the
 * policy's tokenizer, so calls are scored as the token ids that were sampled, where the turn has them.
 */
export async function spiceTurns(
  ep: Parameters<typeof toolCalls>[0],
  summaries: readonly string[],
  scorer: Scorer,
  signal?: AbortSignal,
  exact = false,
): Promise<TurnScore[]> {
  const calls = toolCalls(ep);
  if (!summaries.length)
    return calls.map((c) => ({ turn: c.turn, category: c.category, d: null, reason: 'no-reference' }));
  const per = summaries.length + 1;
  const items = calls.flatMap((c) => [
    item(c, [], exact),
    ...summaries.map((s) => item(c, [referenceMessage(s)], exact)),
  ]);
  const rows = items.length ? await scorer.score(items, signal) : [];
  return calls.map((c, i) => {
    const [plain, ...withRef] = rows.slice(i * per, (i + 1) * per);
    const fit = withRef.filter((r): r is number[] => r !== null);
    if (!plain || !fit.length) return { turn: c.turn, category: c.category, d: null, reason: 'overflow' };
    return { turn: c.turn, category: c.category, d: spiceScore(fit, plain) };
  });
}
