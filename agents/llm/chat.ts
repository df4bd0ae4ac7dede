// What a chat request holds and what comes back: the messages and sampling parameters, the reply's text, its
// token counts and, when asked for, its log-probabilities and exact tokens.

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

/** A function the reply must call (OpenAI's forced tool choice); its arguments come back as JSON text. */
export interface ChatTool {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

export interface ChatRequest {
  messages: ChatMessage[];
  /** The one function the model is made to call. */
  tool?: ChatTool;
  temperature?: number;
  max_tokens?: number;
  stop?: string[];
  seed?: number;
  /** Ask for per-token log-probabilities (kept when the endpoint returns them). */
  logprobs?: boolean;
  /** Which sample of the same prompt this is (several rollouts of one prompt): part of the cache key. */
  sample?: number;
  /** The same request asked again because its answer could not be used: part of the cache key when set. */
  attempt?: number;
}

/**
 * A reply's exact tokens as the endpoint saw and sampled them: the rendered
 * context's ids, the sampled ids and their log-probabilities (one per id). A
 * trainer worker trains on these; text is never tokenised again.
 */
export interface ReplyTokens {
  prompt_ids: number[];
  token_ids: number[];
  logprobs: number[];
  /** 'length' when the reply was cut at max_tokens or the context's end; 'stop' when it ended itself. */
  finish_reason?: string;
}

export interface ChatResult {
  content: string;
  /** With `tool`: the arguments of the function call, when the endpoint made one. */
  tool_arguments?: string;
  usage: { prompt_tokens: number; completion_tokens: number };
  /** True when the answer came from the response cache (no request was made). */
  cached: boolean;
  logprobs?: number[];
  /** When logprobs were asked for and the endpoint returned token ids (a trainer worker; vLLM with return_token_ids). */
  tokens?: ReplyTokens;
}

/** What an echoed completion gives per prompt token (and the one generated after it): the first token's log-probability is null. */
export interface EchoLogprobs {
  tokens: string[];
  logprobs: Array<number | null>;
  /** Each token's first character in the echoed text. */
  offsets: number[];
}

const isIds = (x: unknown): x is number[] => Array.isArray(x) && x.every((v) => Number.isInteger(v) && v >= 0);

/**
 * The exact tokens of the first choice, when the endpoint gave them: the
 * response's `prompt_token_ids` and the choice's `token_ids`, one logprob per
 * id. Anything partial counts as none: a trainer must not guess.
 */
export function replyTokens(r: unknown, logprobs: number[]): ReplyTokens | undefined {
  const res = r as {
    prompt_token_ids?: unknown;
    choices?: Array<{ token_ids?: unknown; prompt_token_ids?: unknown; finish_reason?: unknown }>;
  };
  const choice = res.choices?.[0];
  const prompt = res.prompt_token_ids ?? choice?.prompt_token_ids;
  const ids = choice?.token_ids;
  if (!isIds(prompt) || !isIds(ids) || !prompt.length || !ids.length || ids.length !== logprobs.length)
    return undefined;
  const finish = choice?.finish_reason;
  return {
    prompt_ids: prompt,
    token_ids: ids,
    logprobs,
    ...(typeof finish === 'string' ? { finish_reason: finish } : {}),
  };
}
