// What turn-level shaping asks of a scoring model, and what it records per turn.
import type { ChatMessage } from '../llm/client.js';
import type { CallCategory } from './calls.js';

export type ShapingKind = 'spice' | 'tips' | 'none';

/** One teacher-forced reply: the context (rendered by the scorer), assistant text already written, the scored text. */
export interface ScoreItem {
  messages: ChatMessage[];
  prefix?: string;
  reply: string;
  /**
   * The reply's token ids as the policy sampled them (prefix and reply together), for a scorer with the
   * policy's tokenizer: it then teacher-forces these ids and scores the tokens of the reply's span.
   */
  sampled?: number[];
}

/**
 * The tokens of a sampled reply that cover the characters [from, to): token i spans [offsets[i],
 * offsets[i + 1]); a token that straddles `from` counts, one that starts at or after `to` does not.
 */
export function spanTokens(offsets: readonly number[], from: number, to: number): [number, number] {
  let first = offsets.length;
  let last = 0;
  offsets.forEach((start, i) => {
    const end = offsets[i + 1] ?? Infinity;
    if (start < to && end > from) {
      first = Math.min(first, i);
      last = i + 1;
    }
  });
  return first < last ? [first, last] : [0, 0];
}

/**
 * A frozen scoring model q: per item, the log-probability of each of the reply's tokens, or null when
 * the item did not fit its context.
 */
export interface Scorer {
  score(items: readonly ScoreItem[], signal?: AbortSignal): Promise<Array<number[] | null>>;
}

/** Why a tool-call turn has no score (it then gets zero shaping). */
export type Unscored = 'no-reference' | 'overflow';

export interface TurnScore {
  turn: number;
  category: CallCategory;
  /** The raw signal d (SPICE: Eq. 1; TIPS: the potential's change), or null with the reason. */
  d: number | null;
  reason?: Unscored;
  /** SPICE: references whose summary was cut to fit the scorer's context (the history and call kept whole). */
  truncated?: number;
}

export const mean = (xs: readonly number[]) => xs.reduce((a, x) => a + x, 0) / xs.length;
