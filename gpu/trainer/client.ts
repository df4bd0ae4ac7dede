// The client side of the trainer protocol (README, schemas/trainer/): a
// worker on a GPU host serves the current policy on an OpenAI-compatible
// endpoint for rollouts (each choice with its token ids, the response with
// the prompt's) and takes GRPO steps over HTTP:
//   GET  /health        → Health: step, model, tokenizer and template hashes
//   POST /update  Batch → UpdateResult   one optimiser step on exact tokens
//   POST /score         → per-token log-probabilities under current weights
//   POST /sft           → one optimiser step of supervised fine-tuning on chat conversations
//   POST /eval_loss     → the mean NLL per assistant token under current weights
//   POST /save    { tag, step? } → { path, step }   a complete checkpoint on the worker's disk
//   POST /load    { path }       → { path, step }   restores one
import { EnvError, InternalError, StageFailure } from '../../core/errors.js';
import { validateWithSchema } from '../../core/jsonschema.js';
import batchSchema from '../../schemas/trainer/batch.schema.json';
import type { Batch } from './batch.js';

export interface TokenizerIdentity {
  tokenizer_sha256: string;
  chat_template_sha256: string;
}

export interface Health extends Partial<TokenizerIdentity> {
  status: string;
  step: number;
  model?: string;
  device?: string;
  dtype?: string;
  lora?: boolean;
  gradient_checkpointing?: boolean;
  vocab_size?: number;
  memory?: { kind: 'rss' | 'cuda_max_allocated'; bytes: number };
}

export interface UpdateResult {
  step: number;
  batch_step?: number;
  /** True when every trajectory was masked and no step was taken. */
  skipped: boolean;
  loss?: number;
  clip_frac?: number;
  grad_norm?: number;
  entropy?: number;
  kl?: number;
  tokens?: number;
  loss_tokens?: number;
  sequences?: number;
  tokens_per_s?: number;
  [metric: string]: unknown;
}

/** A context (token ids, or messages the worker renders with its chat template) and the reply's token ids. */
export type ScoreItem = ({ prompt_ids: number[] } | { messages: Array<{ role: string; content: string }> }) &
  ({ token_ids: number[] } | { reply: string }) & { prefix?: string };

export interface ScoreResult {
  prompt_ids: number[];
  token_ids: number[];
  logprobs: number[];
  sum: number;
  /** Longer than the request's max_length: not scored. */
  overflow?: boolean;
  /** With `offsets: true`: where each reply token starts in the reply's decoded text. */
  offsets?: number[];
}

/** A conversation for supervised fine-tuning; the worker renders it with its chat template. */
export interface SftExample {
  messages: Array<{ role: 'system' | 'user' | 'assistant'; content: string }>;
}

export interface SftOptions {
  /** Tokens kept of each conversation (the rest is cut off the end and counted). */
  max_length?: number;
  micro_batch_size?: number;
  tokenizer?: TokenizerIdentity;
}

export interface LossCounts {
  step: number;
  /** Mean NLL per assistant token; null when no conversation had one. */
  loss: number | null;
  sequences: number;
  tokens: number;
  loss_tokens: number;
  truncated: number;
  truncated_tokens: number;
  without_loss: number;
}

export interface SftResult extends LossCounts {
  skipped: boolean;
  grad_norm: number | null;
  lr?: number;
  tokens_per_s?: number | null;
}

export class TrainerClient {
  constructor(
    readonly url: string,
    private readonly timeoutMs = 600_000,
  ) {}

  private async call<T>(method: 'GET' | 'POST', path: string, body?: unknown, signal?: AbortSignal): Promise<T> {
    const target = this.url.replace(/\/+$/, '') + path;
    let res: Response;
    try {
      res = await fetch(target, {
        method,
        headers: body === undefined ? undefined : { 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: signal
          ? AbortSignal.any([signal, AbortSignal.timeout(this.timeoutMs)])
          : AbortSignal.timeout(this.timeoutMs),
      });
    } catch (err) {
      throw new EnvError(`cannot reach the trainer worker at ${target}: ${(err as Error).message}; is it running?`);
    }
    const text = await res.text();
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      if (res.ok)
        throw new StageFailure(`trainer worker ${method} ${path}: the answer is not JSON: ${text.slice(0, 200)}`);
    }
    if (!res.ok) {
      const obj = parsed && typeof parsed === 'object' ? (parsed as Record<string, unknown>) : null;
      const why = typeof obj?.error === 'string' ? obj.error : text.slice(0, 300);
      // The worker's answer is a sentence (422 names the field, 409 both tokenizer hashes, 507 out of memory):
      // worth printing as it is, without a stack.
      const hashes =
        obj?.given && obj?.worker ? ` (batch ${JSON.stringify(obj.given)}, worker ${JSON.stringify(obj.worker)})` : '';
      throw new EnvError(`trainer worker ${method} ${path}: HTTP ${res.status}: ${why}${hashes}`);
    }
    return parsed as T;
  }

  health(signal?: AbortSignal): Promise<Health> {
    return this.call('GET', '/health', undefined, signal);
  }

  /** Sends one step's batch; it is checked against the protocol's schema first. */
  async update(batch: Batch, signal?: AbortSignal): Promise<UpdateResult> {
    const problems = validateWithSchema(batchSchema, batch, new Map(), []).map(
      (d) => `${d.path ?? '(root)'}: ${d.message}`,
    );
    if (problems.length)
      throw new InternalError(`the batch breaks schemas/trainer/batch.schema.json: ${problems.slice(0, 3).join('; ')}`);
    return this.call('POST', '/update', batch, signal);
  }

  /** Per-token log-probabilities of each reply under the worker's current weights. */
  async score(
    items: ScoreItem[],
    o: { temperature?: number; tokenizer?: TokenizerIdentity; max_length?: number; offsets?: boolean } = {},
    signal?: AbortSignal,
  ): Promise<ScoreResult[]> {
    const res = await this.call<{ step: number; results: ScoreResult[] }>('POST', '/score', { items, ...o }, signal);
    return res.results;
  }

  /** One optimiser step on the assistant-token NLL of `examples` (the effective batch). */
  sft(
    examples: SftExample[],
    o: SftOptions & { lr: number; max_grad_norm?: number | null },
    signal?: AbortSignal,
  ): Promise<SftResult> {
    return this.call('POST', '/sft', { examples, ...o }, signal);
  }

  /** The mean NLL per assistant token of `examples`, without changing anything. */
  evalLoss(examples: SftExample[], o: SftOptions = {}, signal?: AbortSignal): Promise<LossCounts> {
    return this.call('POST', '/eval_loss', { examples, ...o }, signal);
  }

  save(step: number, tag: string, signal?: AbortSignal): Promise<{ path: string; step: number }> {
    return this.call('POST', '/save', { step, tag }, signal);
  }

  load(path: string, signal?: AbortSignal): Promise<{ path: string; step: number } & TokenizerIdentity> {
    return this.call('POST', '/load', { path }, signal);
  }
}
