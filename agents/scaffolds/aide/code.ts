// A reply's plan and code as AIDE reads them: the plan is the text before the first fence, the code is every
// python (or unlabelled) fenced block joined in order, and a reply that lacks either is asked for again.
import { ask } from '../turns.js';
import type { EpisodeContext, EpisodeResult } from '../types.js';
import type { PolicyRequest } from '../../policies/types.js';

/** Asks made for one node at most (AIDE's plan_and_code_query retries). */
export const CODE_TRIES = 3;

/** Every ```python, ```py or unlabelled block, joined with a blank line; null when there is none. */
export function extractCode(text: string): string | null {
  const blocks = [...text.matchAll(/```(?:python|py)?[ \t]*\n([\s\S]*?)```/g)]
    .map((m) => m[1].replace(/\n+$/, ''))
    .filter((b) => b.trim() !== '');
  return blocks.length ? blocks.join('\n\n') + '\n' : null;
}

/** The text before the first fence (nothing when the reply has no fence). */
export function planText(text: string): string {
  const at = text.indexOf('```');
  return at < 0 ? '' : text.slice(0, at).trim();
}

export interface CodeReply {
  plan: string;
  code: string;
  /** The last reply held a plan and code; otherwise its whole text is run as the code, as AIDE does. */
  format_ok: boolean;
  /** Replies without a plan or code before the one kept. */
  retries: number;
  text: string;
}

/** Up to three asks until a reply holds both a plan and code. */
export async function askCode(
  ctx: EpisodeContext,
  req: PolicyRequest,
  usage: EpisodeResult['usage'],
): Promise<CodeReply | { stop: EpisodeResult['ended']; error: string }> {
  let text = '';
  for (let attempt = 0; attempt < CODE_TRIES; attempt++) {
    const reply = await ask(ctx, attempt ? { ...req, attempt } : req, usage);
    if ('stop' in reply) return reply;
    text = reply.text;
    const code = extractCode(text);
    const plan = planText(text);
    if (code !== null && plan) return { plan, code, format_ok: true, retries: attempt, text };
  }
  return { plan: '', code: text, format_ok: false, retries: CODE_TRIES - 1, text };
}
