// The client side of the trainer protocol (README, schemas/trainer/): a
// worker on a GPU host serves the current policy on an OpenAI-compatible
// endpoint for rollouts and takes GRPO steps over HTTP:
//   GET  /health        → { status: "ok", step, model }
//   POST /update  Batch → { step, loss?, ... }   one optimiser step on the batch
//   POST /save    { step, tag } → { path }      a checkpoint on the worker's disk
import { EnvError } from '../../core/errors.js';
import { validateWithSchema } from '../../core/jsonschema.js';
import batchSchema from '../../schemas/trainer/batch.schema.json';
import type { Batch } from '../../stages/grpo/batch.js';

export interface Health {
  status: string;
  step: number;
  model?: string;
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
        signal: signal ? AbortSignal.any([signal, AbortSignal.timeout(this.timeoutMs)]) : AbortSignal.timeout(this.timeoutMs),
      });
    } catch (err) {
      throw new EnvError(`cannot reach the trainer worker at ${target}: ${(err as Error).message}; is it running?`);
    }
    const text = await res.text();
    if (!res.ok) throw new Error(`trainer worker ${method} ${path}: HTTP ${res.status}: ${text.slice(0, 300)}`);
    try {
      return JSON.parse(text) as T;
    } catch {
      throw new Error(`trainer worker ${method} ${path}: the answer is not JSON: ${text.slice(0, 200)}`);
    }
  }

  health(signal?: AbortSignal): Promise<Health> {
    return this.call('GET', '/health', undefined, signal);
  }

  /** Sends one step's batch; it is checked against the protocol's schema first. */
  async update(batch: Batch, signal?: AbortSignal): Promise<Record<string, unknown>> {
    const problems = validateWithSchema(batchSchema, batch, new Map(), []).map((d) => `${d.path ?? '(root)'}: ${d.message}`);
    if (problems.length) throw new Error(`the batch breaks schemas/trainer/batch.schema.json: ${problems.slice(0, 3).join('; ')}`);
    return this.call('POST', '/update', batch, signal);
  }

  save(step: number, tag: string, signal?: AbortSignal): Promise<{ path: string }> {
    return this.call('POST', '/save', { step, tag }, signal);
  }
}
