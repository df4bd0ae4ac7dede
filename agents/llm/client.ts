// The client every LLM-backed part of mlepipe uses (factory roles, policies):
// the official `openai` package against any OpenAI-compatible endpoint, with
// a per-model concurrency limit, retries with exponential backoff and jitter
// on 429, 5xx, timeouts and connection errors, a fast failure that names an
// unreachable endpoint, token and cost accounting, and a response cache so
// that a rerun replays finished calls for free.
import type OpenAI from 'openai';
import { EnvError, StageFailure } from '../../core/errors.js';
import type { ModelSpec } from '../../core/models.js';
import { replyTokens, type ChatRequest, type ChatResult, type EchoLogprobs } from './chat.js';
import { watchDeadline } from './deadline.js';
import { Semaphore } from './limit.js';
import { cacheKey, readCached, writeCached } from './response-cache.js';
import { backoffMs, classify, DeadlineExpired, sleep } from './retry.js';

// Named here too, so that what calls a model imports from one place.
export {
  replyTokens,
  type ChatMessage,
  type ChatTool,
  type ChatRequest,
  type ChatResult,
  type EchoLogprobs,
  type ReplyTokens,
} from './chat.js';
export { backoffMs, retryAfterMs } from './retry.js';

export interface Usage {
  requests: number;
  cached: number;
  retries: number;
  prompt_tokens: number;
  completion_tokens: number;
  cost_usd: number;
}

export interface LlmClientOptions {
  /** The `models:` entry name, for messages. */
  name: string;
  spec: ModelSpec;
  /** Folder of the response cache (`<cache>/llm`); no caching without one. */
  cacheDir?: string;
  env?: NodeJS.ProcessEnv;
  maxRetries?: number;
  /** First backoff; doubles each retry, plus up to as much again of jitter. */
  baseDelayMs?: number;
  /** How often a waiting request asks the server whether it is queued or running (deadline.ts); 2 s. */
  pollMs?: number;
  log?: (message: string) => void;
}

/** The SDK's own timer, which covers only the wait for response headers, is left far behind the deadline's. */
const SDK_TIMEOUT_MS = 24 * 3600 * 1000;

const limits = new Map<string, Semaphore>();

// The SDK loads on the first request, not at every start of the CLI.
let sdk: Promise<typeof import('openai').default> | undefined;
const loadSdk = () => (sdk ??= import('openai').then((m) => m.default));

function semaphoreFor(name: string, spec: ModelSpec): Semaphore {
  const key = `${spec.base_url ?? ''}\u0000${spec.model}`;
  let s = limits.get(key);
  if (!s) {
    s = new Semaphore(spec.concurrency);
    limits.set(key, s);
  }
  return s;
}

/** How OpenAI-compatible servers (vLLM among them) word a prompt longer than the model's context. */
const CONTEXT_OVERFLOW = /maximum context length|context length|too long/i;

/** A request whose prompt does not fit the model's context: a result for a scorer (no score), not a failure. */
export class ContextOverflow extends Error {}

export class LlmClient {
  private openai?: OpenAI;
  private readonly endpoint: string;
  private readonly apiKey: string;
  readonly usage: Usage = { requests: 0, cached: 0, retries: 0, prompt_tokens: 0, completion_tokens: 0, cost_usd: 0 };

  constructor(private readonly opts: LlmClientOptions) {
    const env = opts.env ?? process.env;
    this.endpoint = opts.spec.base_url ?? 'https://api.openai.com/v1';
    const apiKey = opts.spec.api_key_env ? env[opts.spec.api_key_env] : undefined;
    if (opts.spec.api_key_env && !apiKey) {
      throw new EnvError(
        `model "${opts.name}": environment variable ${opts.spec.api_key_env} (api_key_env) is not set`,
      );
    }
    // Self-hosted servers (vLLM, SGLang, Ollama) accept any key.
    this.apiKey = apiKey ?? 'unused';
  }

  /** The cache key: model, messages, sampling parameters and sample index (not where the model is served). */
  cacheKey(req: ChatRequest): string {
    return cacheKey(this.opts.spec, req);
  }

  async chat(req: ChatRequest, signal?: AbortSignal): Promise<ChatResult> {
    const key = this.cacheKey(req);
    const dir = this.opts.cacheDir;
    const hit = dir ? await readCached(dir, key) : undefined;
    if (hit) {
      this.usage.cached++;
      return hit;
    }
    const result = await semaphoreFor(this.opts.name, this.opts.spec).run(() => this.request(req, signal));
    if (dir) await writeCached(dir, key, this.opts.spec.model, req, result);
    return result;
  }

  private async request(req: ChatRequest, signal?: AbortSignal): Promise<ChatResult> {
    const s = this.opts.spec;
    return this.retrying(async (openai, opts) => {
      const r = await openai.chat.completions.create(
        {
          model: s.model,
          messages: req.messages,
          temperature: req.temperature ?? s.temperature,
          max_tokens: req.max_tokens ?? s.max_tokens,
          stop: req.stop,
          seed: req.seed,
          // vLLM returns the ids only when asked (return_token_ids); a trainer worker always does.
          ...(req.logprobs ? { logprobs: true, return_token_ids: true } : {}),
          ...(req.tool
            ? {
                tools: [{ type: 'function', function: req.tool }],
                tool_choice: { type: 'function', function: { name: req.tool.name } },
              }
            : {}),
        } as OpenAI.Chat.ChatCompletionCreateParamsNonStreaming,
        opts,
      );
      const usage = this.count(r.usage);
      const logprobs = r.choices[0]?.logprobs?.content?.map((t) => t.logprob);
      const tokens = logprobs ? replyTokens(r, logprobs) : undefined;
      const call = r.choices[0]?.message?.tool_calls?.find((c) => c.type === 'function');
      return {
        content: r.choices[0]?.message?.content ?? '',
        ...(call && 'function' in call ? { tool_arguments: call.function.arguments } : {}),
        usage,
        cached: false,
        ...(logprobs ? { logprobs } : {}),
        ...(tokens ? { tokens } : {}),
      };
    }, signal);
  }

  /**
   * The legacy completions endpoint with the prompts echoed: one token list with log-probabilities and
   * character offsets per prompt, in order (one generated token follows each prompt; servers refuse
   * max_tokens 0). A prompt past the model's context fails the whole request with ContextOverflow.
   */
  async promptLogprobs(prompts: readonly string[], signal?: AbortSignal): Promise<EchoLogprobs[]> {
    if (!prompts.length) return [];
    return semaphoreFor(this.opts.name, this.opts.spec).run(() =>
      this.retrying(async (openai, opts) => {
        const r = await openai.completions.create(
          { model: this.opts.spec.model, prompt: [...prompts], echo: true, logprobs: 1, max_tokens: 1, temperature: 0 },
          opts,
        );
        this.count(r.usage);
        const out = new Array<EchoLogprobs>(prompts.length);
        for (const c of r.choices) {
          const lp = c.logprobs;
          if (
            !lp?.tokens ||
            !lp.token_logprobs ||
            !lp.text_offset ||
            lp.tokens.length !== lp.token_logprobs.length ||
            lp.tokens.length !== lp.text_offset.length
          ) {
            throw new EnvError(
              `${this.who()}: a completion with echo returned no token log-probabilities and offsets (does the server support echo with logprobs?)`,
            );
          }
          out[c.index] = {
            tokens: lp.tokens,
            logprobs: lp.token_logprobs as Array<number | null>,
            offsets: lp.text_offset,
          };
        }
        if (out.some((x) => x === undefined) || out.length !== prompts.length)
          throw new EnvError(`${this.who()}: ${r.choices.length} choices for ${prompts.length} prompts`);
        return out;
      }, signal),
    );
  }

  private count(u: { prompt_tokens?: number; completion_tokens?: number } | undefined): ChatResult['usage'] {
    const s = this.opts.spec;
    this.usage.requests++;
    const usage = { prompt_tokens: u?.prompt_tokens ?? 0, completion_tokens: u?.completion_tokens ?? 0 };
    this.usage.prompt_tokens += usage.prompt_tokens;
    this.usage.completion_tokens += usage.completion_tokens;
    this.usage.cost_usd +=
      (usage.prompt_tokens * s.price_in_per_1m + usage.completion_tokens * s.price_out_per_1m) / 1e6;
    return usage;
  }

  /**
   * One call with the retry policy: backoff on 429, 5xx, timeouts and connection errors; a failure names the
   * endpoint. Each try has `timeout_s` from when the server started it (deadline.ts), and its own request id.
   */
  private async retrying<T>(
    call: (
      openai: OpenAI,
      opts: { signal: AbortSignal; timeout: number; headers: Record<string, string> },
    ) => Promise<T>,
    signal?: AbortSignal,
  ): Promise<T> {
    const s = this.opts.spec;
    const Sdk = await loadSdk();
    this.openai ??= new Sdk({ baseURL: this.endpoint, apiKey: this.apiKey, maxRetries: 0, timeout: SDK_TIMEOUT_MS });
    const maxRetries = this.opts.maxRetries ?? s.retries;
    const base = this.opts.baseDelayMs ?? 500;
    for (let attempt = 0; ; attempt++) {
      // The SDK would throw too, but only after building the request.
      signal?.throwIfAborted();
      // A self-hosted server may report its queue; OpenAI's own API is never asked.
      const deadline = watchDeadline(
        { endpoint: s.base_url, timeoutMs: s.timeout_s * 1000, pollMs: this.opts.pollMs ?? 2000 },
        signal,
      );
      try {
        try {
          return await call(this.openai, {
            signal: deadline.signal,
            timeout: SDK_TIMEOUT_MS,
            headers: { 'x-request-id': deadline.id },
          });
        } catch (err) {
          throw deadline.expired() && !signal?.aborted
            ? new DeadlineExpired(`no answer ${s.timeout_s} s after the server started the request`)
            : err;
        } finally {
          deadline.done();
        }
      } catch (err) {
        if (signal?.aborted) throw err;
        if (err instanceof Sdk.APIError && err.status === 400 && CONTEXT_OVERFLOW.test(err.message))
          throw new ContextOverflow(`${this.who()}: ${err.message}`);
        const why = classify(Sdk, err);
        if (!why.retry || attempt >= maxRetries) throw this.failure(Sdk, err, why.text, attempt + 1, why.retry);
        const delay = why.retryAfterMs ?? backoffMs(attempt, base);
        this.usage.retries++;
        this.opts.log?.(`${this.endpoint}: ${why.text}; retry ${attempt + 1}/${maxRetries} in ${Math.round(delay)} ms`);
        await sleep(delay, signal);
      }
    }
  }

  private who(): string {
    return `model "${this.opts.name}" (${this.opts.spec.model}) at ${this.endpoint}`;
  }

  private failure(
    OpenAI: typeof import('openai').default,
    err: unknown,
    text: string,
    tries: number,
    retryable: boolean,
  ): Error {
    const who = this.who();
    if (err instanceof OpenAI.APIConnectionError && !(err instanceof OpenAI.APIConnectionTimeoutError)) {
      return new EnvError(`cannot reach ${who}: ${text} after ${tries} tries; is the server running?`);
    }
    // Still overloaded or timing out after every retry: the endpoint's problem, not the request's
    // (an agent's run is not recorded as failed because of it).
    if (retryable) return new EnvError(`${who} kept failing: ${text} after ${tries} tries`);
    return new StageFailure(`${who}: ${text}${tries > 1 ? ` after ${tries} tries` : ''}`);
  }
}
