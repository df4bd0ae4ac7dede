// Legacy completions with the prompt echoed, for the replay server: a fixed
// tokenizer (chat special tokens, words, runs of spaces, single other
// characters) and a fixed log-probability per token and position, so a test
// can work out by hand what a prompt-log-probability scorer must return.
// Offsets count code points, as servers written in Python do.
import type { Reply, ReplayServer } from './replay-server.js';

const TOKEN = /<\|[a-z_]+\|>|[A-Za-z0-9_]+|\s+|[^\sA-Za-z0-9_]/gu;

/** The tokens of a text, each with its first code point's offset. */
export function echoTokens(text: string): Array<{ token: string; offset: number }> {
  const out: Array<{ token: string; offset: number }> = [];
  let cp = 0;
  for (const m of text.matchAll(TOKEN)) {
    out.push({ token: m[0], offset: cp });
    cp += [...m[0]].length;
  }
  return out;
}

/** log q of a token at a position: depends on both, so the same call after another context scores differently. */
export function echoLogprob(token: string, position: number): number {
  let h = position * 7919 + 17;
  for (const ch of token) h = (h * 31 + ch.codePointAt(0)!) % 1_000_003;
  return -(1 + (h % 13)) / 8;
}

/** The one token generated after every prompt (max_tokens 1): it starts where the prompt ends. */
export const GENERATED = '¶';

function choice(prompt: string, index: number, bos: string) {
  // A begin-of-text token the server adds is counted in the offsets, as some servers do.
  const lead = [...bos].length;
  const toks = [
    ...(bos ? [{ token: bos, offset: 0 }] : []),
    ...echoTokens(prompt).map((t) => ({ ...t, offset: t.offset + lead })),
    { token: GENERATED, offset: lead + [...prompt].length },
  ];
  return {
    index,
    text: bos + prompt + GENERATED,
    logprobs: {
      tokens: toks.map((t) => t.token),
      token_logprobs: toks.map((t, i) => (i === 0 ? null : echoLogprob(t.token, i))),
      text_offset: toks.map((t) => t.offset),
      top_logprobs: toks.map(() => null),
    },
    finish_reason: 'length',
  };
}

/**
 * A script step answering a legacy completion with echoed log-probabilities; a request with a prompt of
 * more than `context` tokens is refused the way vLLM refuses it (HTTP 400 naming the maximum context length).
 * `bos`: a begin-of-text token put before every prompt.
 */
export function echoReply(context = Infinity, bos = ''): (body: ReplayServer['requests'][number]) => Reply {
  return (body) => {
    const prompts = typeof body.prompt === 'string' ? [body.prompt] : (body.prompt ?? []);
    const longest = Math.max(0, ...prompts.map((p) => echoTokens(p).length));
    if (longest + 1 > context) {
      return {
        status: 400,
        message: `This model's maximum context length is ${context} tokens. However, you requested ${longest + 1} tokens (${longest} in the messages, 1 in the completion). Please reduce the length of the messages or completion.`,
      };
    }
    const n = prompts.reduce((a, p) => a + echoTokens(p).length, 0);
    return {
      json: {
        id: 'cmpl-echo',
        object: 'text_completion',
        created: 0,
        model: body.model,
        choices: prompts.map((p, i) => choice(p, i, bos)),
        usage: { prompt_tokens: n, completion_tokens: prompts.length, total_tokens: n + prompts.length },
      },
    };
  };
}
