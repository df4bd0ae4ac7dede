// TIPS as MLToolBench adapts it: the solution summaries are reference answers,
// and the potential of a history is the likelihood the scorer gives them after
// it (token-averaged within a summary, then averaged over summaries). A tool
// call's signal is the potential after its observation minus the potential
// before the call.
import type { ChatMessage } from '../llm/client.js';
import { toolCalls } from './calls.js';
import { mean, type Scorer, type TurnScore } from './types.js';
import { InternalError } from '../../core/errors.js';

/** The training-only request after which the scorer predicts a reference answer. */
export const TIPS_REQUEST: ChatMessage = {
  role: 'user',
  content: 'TIPS_INSTRUCTION: Describe, in one paragraph, the approach of a verified solution of this task.',
};

/** Φ(h) = 1/K Σ_c 1/|c| Σ_u log q(c_u | h, request, c_<u), from each summary's token log-probabilities. */
export function tipsPotential(perSummary: readonly (readonly number[])[]): number {
  if (!perSummary.length || perSummary.some((lp) => !lp.length))
    throw new InternalError('a TIPS potential needs at least one summary with tokens');
  return mean(perSummary.map((lp) => mean(lp)));
}

/** Φ(h_s) − Φ(h_{s−1}) on every tool-call turn; unscored when there is no reference or a history overflows. */
export async function tipsTurns(
  ep: Parameters<typeof toolCalls>[0],
  summaries: readonly string[],
  scorer: Scorer,
  signal?: AbortSignal,
): Promise<TurnScore[]> {
  const calls = toolCalls(ep);
  if (!summaries.length)
    return calls.map((c) => ({ turn: c.turn, category: c.category, d: null, reason: 'no-reference' }));
  // Every history is a prefix of the same conversation: one potential per length, shared by consecutive calls.
  const histories = new Map<number, ChatMessage[]>();
  for (const c of calls) for (const h of [c.history, c.after]) histories.set(h.length, h);
  const lengths = [...histories.keys()];
  const items = lengths.flatMap((n) =>
    summaries.map((s) => ({ messages: [...histories.get(n)!, TIPS_REQUEST], reply: s })),
  );
  const rows = items.length ? await scorer.score(items, signal) : [];
  const potential = new Map<number, number | null>();
  lengths.forEach((n, j) => {
    const r = rows.slice(j * summaries.length, (j + 1) * summaries.length);
    potential.set(n, r.some((x) => x === null) ? null : tipsPotential(r as number[][]));
  });
  return calls.map((c) => {
    const before = potential.get(c.history.length) ?? null;
    const after = potential.get(c.after.length) ?? null;
    return before === null || after === null
      ? { turn: c.turn, category: c.category, d: null, reason: 'overflow' }
      : { turn: c.turn, category: c.category, d: after - before };
  });
}
