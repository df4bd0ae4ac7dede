// SPICE (MLToolBench Eq. 1): how much a verified solution's summary raises the
// likelihood of the tool call the policy sampled. Both branches teacher-force
// the same call tokens after the same history and reasoning; the conditioned
// branch adds one training-only user message with the summary. The turn's
// observation and everything after it are never shown to either branch. A
// conditioned branch over the scorer's context keeps its history and call whole
// and has only its summary cut (the paper's App. D.2).
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

/** A conditioned branch over the context, its summary being cut: `lo` words are known to fit (0: none tried), `hi` not. */
interface Cut {
  call: ToolCall;
  summary: string;
  /** Where each word of the summary ends: `lo` words keep summary.slice(0, ends[lo - 1]). */
  ends: number[];
  lo: number;
  hi: number;
  scored: number[] | null;
}

const wordEnds = (s: string) => [...s.matchAll(/\S+/g)].map((m) => m.index + m[0].length);

/**
 * Each branch's summary cut to its longest word prefix that fits the scorer's context, found by bisection
 * over the words (the scorer alone knows its tokens and its limit), every branch of the trajectory in one
 * request a round. A branch keeps the log-probabilities of its longest fitting cut, or null when not even
 * its first word fits.
 */
async function cutToFit(cuts: Cut[], scorer: Scorer, exact: boolean, signal?: AbortSignal): Promise<void> {
  for (;;) {
    const open = cuts.filter((c) => c.hi - c.lo > 1);
    if (!open.length) return;
    const mids = open.map((c) => (c.lo + c.hi) >> 1);
    const rows = await scorer.score(
      open.map((c, i) => item(c.call, [referenceMessage(c.summary.slice(0, c.ends[mids[i] - 1]))], exact)),
      signal,
    );
    open.forEach((c, i) => {
      if (rows[i] === null) c.hi = mids[i];
      else [c.lo, c.scored] = [mids[i], rows[i]];
    });
  }
}

/**
 * Eq. 1 on every tool-call turn of one trajectory. No reference: every call scores null (zero shaping).
 * A conditioned branch that does not fit the scorer's context has its summary cut until it does, the
 * history and the call kept whole (`truncated` counts those references); a reference of which not a word
 * fits is left out of the mean. When the plain branch (history and call alone) overflows, or no reference
 * fits at all, the call is unscored. `exact`: the scorer shares the policy's tokenizer, so calls are
 * scored as the token ids that were sampled, where the turn has them.
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
  // Branches over the context whose plain branch fits: only there does cutting the summary help.
  const cuts = calls.flatMap((call, i) =>
    rows[i * per] === null
      ? []
      : summaries.flatMap((summary, k): Cut[] => {
          if (rows[i * per + 1 + k] !== null) return [];
          const ends = wordEnds(summary);
          return [{ call, summary, ends, lo: 0, hi: ends.length, scored: null }];
        }),
  );
  await cutToFit(cuts, scorer, exact, signal);
  return calls.map((c, i) => {
    const [plain, ...withRef] = rows.slice(i * per, (i + 1) * per);
    const mine = cuts.filter((x) => x.call === c && x.scored);
    const fit = [...withRef.filter((r): r is number[] => r !== null), ...mine.map((x) => x.scored!)];
    if (!plain || !fit.length) return { turn: c.turn, category: c.category, d: null, reason: 'overflow' };
    return {
      turn: c.turn,
      category: c.category,
      d: spiceScore(fit, plain),
      ...(mine.length ? { truncated: mine.length } : {}),
    };
  });
}
