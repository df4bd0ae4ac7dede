// A scorer on any OpenAI-compatible server that echoes prompt log-probabilities
// (vLLM's legacy completions endpoint): the chat is rendered to text with the
// scoring model's chat template, the reply appended after the assistant header
// and its reasoning prefix, and the reply's tokens picked by their character
// offsets. The server tokenises the text itself, so the call's tokens are the
// scorer's own, not the policy's.
import { ContextOverflow, type ChatMessage, type EchoLogprobs, type LlmClient } from '../llm/client.js';
import { spanTokens, type Scorer, type ScoreItem } from './types.js';

/** Chat templates a scorer's text can be rendered with. */
export type ChatTemplate = 'chatml' | 'llama3';

/**
 * The conversation as the model saw it in training, up to the start of the assistant's reply. ChatML is the
 * Qwen family's; Llama 3 leaves out its begin-of-text token, which the server adds when it tokenises.
 */
export function renderChat(messages: readonly ChatMessage[], template: ChatTemplate): string {
  if (template === 'llama3') {
    const turn = (role: string, content: string) =>
      `<|start_header_id|>${role}<|end_header_id|>\n\n${content}<|eot_id|>`;
    return messages.map((m) => turn(m.role, m.content)).join('') + '<|start_header_id|>assistant<|end_header_id|>\n\n';
  }
  return messages.map((m) => `<|im_start|>${m.role}\n${m.content}<|im_end|>\n`).join('') + '<|im_start|>assistant\n';
}

/** The scored text of one item and where its reply sits in it, in UTF-16 units. */
export function itemPrompt(item: ScoreItem, template: ChatTemplate): { text: string; from: number; to: number } {
  const head = renderChat(item.messages, template) + (item.prefix ?? '');
  return { text: head + item.reply, from: head.length, to: head.length + item.reply.length };
}

/**
 * Servers count offsets in characters (code points); JavaScript strings index UTF-16 units. Maps each
 * code-point offset of `text` to its UTF-16 index (the same numbers for text without astral characters).
 */
function codeUnitIndex(text: string): (cp: number) => number {
  const starts: number[] = [];
  let i = 0;
  for (const ch of text) {
    starts.push(i);
    i += ch.length;
  }
  starts.push(i);
  return (cp) => starts[Math.min(cp, starts.length - 1)];
}

/**
 * Code points the offsets count before the text itself: a server that puts a begin-of-text token in front
 * of the text may count that token's characters too (its offsets then start past them).
 */
function leadingExtra(echo: EchoLogprobs, text: string): number {
  const first = echo.tokens[0] ?? '';
  const n = [...first].length;
  return n && !text.startsWith(first) && echo.offsets[1] === n && echo.tokens.join('').startsWith(first + text) ? n : 0;
}

/**
 * The reply's token log-probabilities from an echoed prompt: tokens that begin past the prompt were
 * generated and are dropped, then the tokens overlapping [from, to) are kept. Null when the prompt took
 * more than `maxLength` tokens, or when a kept token has no log-probability (the first of the text).
 */
export function replyLogprobs(
  echo: EchoLogprobs,
  p: { text: string; from: number; to: number },
  maxLength: number,
): number[] | null {
  const toUnits = codeUnitIndex(p.text);
  const extra = leadingExtra(echo, p.text);
  const offsets = echo.offsets.map((o) => (o < extra ? -1 : toUnits(o - extra)));
  const n = offsets.findIndex((o) => o >= p.text.length);
  const prompt = n < 0 ? offsets.length : n;
  if (prompt > maxLength) return null;
  const [a, b] = spanTokens(offsets.slice(0, prompt), p.from, p.to);
  if (b <= a) return null;
  const lp = echo.logprobs.slice(a, b);
  return lp.every((x): x is number => typeof x === 'number') ? lp : null;
}

export interface PromptScorerOptions {
  template: ChatTemplate;
  /** Tokens a scored prompt may take; longer ones score null, as if the server had refused them. */
  maxLength: number;
  /** Prompts per request. */
  batch?: number;
}

/**
 * Prompt log-probabilities as a Scorer. Items go in batches (as many at once as the model's concurrency); a batch the server refuses for its context
 * length is retried one item at a time, so only the items that do not fit score null.
 */
export function promptScorer(client: LlmClient, o: PromptScorerOptions): Scorer {
  const size = o.batch ?? 16;
  const one = async (p: ReturnType<typeof itemPrompt>, signal?: AbortSignal) => {
    try {
      return replyLogprobs((await client.promptLogprobs([p.text], signal))[0], p, o.maxLength);
    } catch (err) {
      if (err instanceof ContextOverflow) return null;
      throw err;
    }
  };
  const batch = async (prompts: Array<ReturnType<typeof itemPrompt>>, signal?: AbortSignal) => {
    try {
      const echoes = await client.promptLogprobs(
        prompts.map((p) => p.text),
        signal,
      );
      return echoes.map((e, j) => replyLogprobs(e, prompts[j], o.maxLength));
    } catch (err) {
      if (!(err instanceof ContextOverflow)) throw err;
      const out: Array<number[] | null> = [];
      for (const p of prompts) out.push(await one(p, signal));
      return out;
    }
  };
  return {
    async score(items, signal) {
      const prompts = items.map((it) => itemPrompt(it, o.template));
      const batches: Array<typeof prompts> = [];
      for (let i = 0; i < prompts.length; i += size) batches.push(prompts.slice(i, i + size));
      // The client's per-model limit decides how many batches are in flight.
      return (await Promise.all(batches.map((b) => batch(b, signal)))).flat();
    },
  };
}
