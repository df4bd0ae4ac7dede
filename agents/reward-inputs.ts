// The released SandMLE code's reward inputs (deepresearch_workflow.py,
// DeepResearchWorkflow), beside mlepipe's (docs/training.md#reward-inputs):
// which grade is rewarded, how replies earn `format`, and what a null
// threshold does to the milestones.
import type { EvaluatorResult } from '../sandbox/evaluate.js';
import type { ChatMessage } from './llm/client.js';
import type { EpisodeResult } from './scaffolds/types.js';
import { pyStrip } from './scaffolds/react/release.js';

/**
 * The grade of the last submission the Score tool graded in the episode
 * (`_extract_score_metrics` reads the last Score answer with a score back
 * out of the conversation), or null when it graded none.
 */
export function lastScored(ep: Pick<EpisodeResult, 'turns'>): { turn: number; evaluation: EvaluatorResult } | null {
  for (let i = ep.turns.length - 1; i >= 0; i--) {
    const t = ep.turns[i];
    if (t.action === 'validate' && t.evaluation) return { turn: t.turn, evaluation: t.evaluation };
  }
  return null;
}

/**
 * `_format_correct_rate`: the share of replies that start (after leading
 * space) with <think> and hold a reasoning body that is not only spaces and
 * newlines; what follows is not checked. A reply is read as the release
 * keeps it, cut before any <tool_response> it wrote itself.
 */
export function releaseFormatRate(messages: readonly ChatMessage[], turns: readonly { pruned?: true }[] = []): number {
  // Replies the release's pruning removed are not in the conversation it rates (a reply is its turn, in order).
  const replies = messages.filter((m) => m.role === 'assistant').filter((_, i) => !turns[i]?.pruned);
  if (!replies.length) return 0;
  const ok = replies.filter((m) => {
    const cut = m.content.indexOf('<tool_response>');
    const content = (cut >= 0 ? m.content.slice(0, cut) : m.content).replace(
      /^[\t\n\x0b\x0c\r\x1c-\x1f \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+/,
      '',
    );
    if (!content.startsWith('<think>') || !content.includes('</think>')) return false;
    return pyStrip(content.slice('<think>'.length, content.indexOf('</think>'))).replace(/[\n ]/g, '') !== '';
  });
  return ok.length / replies.length;
}

/** A grade with a null threshold: `float(None)` raises in `_score_to_reward`, and the reward falls back to its format part. */
export const hasNullThreshold = (r: EvaluatorResult) =>
  [r.gold_threshold, r.silver_threshold, r.bronze_threshold, r.median_threshold].some((x) => x === null);
