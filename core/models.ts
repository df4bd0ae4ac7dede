/**
 * A `models:` entry: a named policy that stages refer to by name. `openai`: an
 * OpenAI-compatible endpoint that is already running (OpenAI, vLLM, SGLang,
 * Ollama, a trainer worker started by hand). `worker`: weights that a node
 * serves itself, for its lifetime, on a trainer worker started here
 * (gpu/trainer/local.ts): a model folder, a checkpoint an upstream stage
 * wrote, or the tiny random-weight model tests use.
 *
 * Two shapes: WrittenModel is the entry as the experiment file holds it (checked against the experiment schema
 * in pipelines/config/written-check.ts); ModelSpec is the entry the loader resolved from it, one shape a provider,
 * its defaults filled in, so that no consumer decides a default of its own.
 */
export interface WrittenModel {
  provider: 'openai' | 'worker';
  /** openai: endpoint root, e.g. http://gpu1:8000/v1. */
  base_url?: string;
  /** worker: a model folder (Hugging Face layout, or a checkpoint the worker saved), relative to the experiment file. */
  path?: string;
  /** worker: a stage in the node's needs: whose output holds `checkpoint/` (an sft stage, a grpo stage with trainer: worker). */
  checkpoint?: string;
  /** worker: the tiny random-weight Qwen3 with this seed (tests and CPU demos). */
  tiny?: number;
  /** worker: what serves the weights for a node that samples from them: the trainer worker (default) or vLLM's server. */
  serve?: 'worker' | 'vllm';
  /** worker: LoRA rank when training (0: full fine-tuning); the worker's default otherwise. */
  lora_rank?: number;
  /** Model name the endpoint serves. */
  model: string;
  /** Name of the environment variable that holds the API key (never the key itself). */
  api_key_env?: string;
  temperature?: number;
  max_tokens?: number;
  /** Requests in flight at once against this endpoint. */
  concurrency?: number;
  timeout_s?: number;
  /** Tries after a failed request that may succeed later (429, 5xx, a timeout, no connection); default 4. */
  retries?: number;
  /** USD per million prompt / completion tokens, for the cost estimate in node metrics (default 0). */
  price_in_per_1m?: number;
  price_out_per_1m?: number;
}

/** What an entry leaves out is taken from here, when the experiment loads. */
export const MODEL_DEFAULTS = {
  concurrency: 4,
  timeout_s: 120,
  retries: 4,
  price_in_per_1m: 0,
  price_out_per_1m: 0,
} as const;

/** What both providers have once resolved. */
interface ResolvedModelBase {
  readonly model: string;
  readonly base_url?: string;
  readonly api_key_env?: string;
  /** Absent: the endpoint's own (no value is sent). */
  readonly temperature?: number;
  readonly max_tokens?: number;
  readonly concurrency: number;
  readonly timeout_s: number;
  readonly retries: number;
  readonly price_in_per_1m: number;
  readonly price_out_per_1m: number;
  /** Read by the checks of stages that train, whichever the provider, to refuse what they cannot do with it. */
  readonly lora_rank?: number;
}

export interface OpenAIModel extends ResolvedModelBase {
  readonly provider: 'openai';
  /** The weights verl trains when this endpoint is a grpo policy with trainer: verl. */
  readonly path?: string;
}

/**
 * The weights a worker entry serves: exactly one of the three. The other two are spelled out as absent so that
 * code may read any of them off the entry and test it.
 */
export type WorkerWeights =
  | { readonly path: string; readonly checkpoint?: undefined; readonly tiny?: undefined }
  | { readonly path?: undefined; readonly checkpoint: string; readonly tiny?: undefined }
  | { readonly path?: undefined; readonly checkpoint?: undefined; readonly tiny: number };

export type WorkerModel = ResolvedModelBase & {
  readonly provider: 'worker';
  readonly serve: 'worker' | 'vllm';
} & WorkerWeights;

/** A resolved `models:` entry. */
export type ModelSpec = OpenAIModel | WorkerModel;

/**
 * The entry as the engine works from it. The loader calls this after the rules have accepted the file, so a worker
 * entry names exactly one set of weights; the checks that run before that see the weights as written.
 */
export function resolveModel(m: WrittenModel): ModelSpec {
  const base = {
    model: m.model,
    ...defined({
      base_url: m.base_url,
      api_key_env: m.api_key_env,
      temperature: m.temperature,
      max_tokens: m.max_tokens,
      lora_rank: m.lora_rank,
    }),
    concurrency: m.concurrency ?? MODEL_DEFAULTS.concurrency,
    timeout_s: m.timeout_s ?? MODEL_DEFAULTS.timeout_s,
    retries: m.retries ?? MODEL_DEFAULTS.retries,
    price_in_per_1m: m.price_in_per_1m ?? MODEL_DEFAULTS.price_in_per_1m,
    price_out_per_1m: m.price_out_per_1m ?? MODEL_DEFAULTS.price_out_per_1m,
  };
  if (m.provider !== 'worker') return { ...base, provider: 'openai', ...defined({ path: m.path }) };
  const weights = defined({ path: m.path, checkpoint: m.checkpoint, tiny: m.tiny }) as WorkerWeights;
  return { ...base, provider: 'worker', serve: m.serve ?? 'worker', ...weights };
}

/** Every entry of `models:` resolved. */
export function resolveModels(
  models: Readonly<Record<string, WrittenModel>> | undefined,
): Readonly<Record<string, ModelSpec>> {
  return Object.fromEntries(Object.entries(models ?? {}).map(([name, m]) => [name, resolveModel(m)]));
}

/** What of a model decides its outputs, and so goes into node keys (not where it is served). */
export function modelIdentity(m: ModelSpec): Record<string, unknown> {
  const sampling = { temperature: m.temperature ?? null, max_tokens: m.max_tokens ?? null };
  // An endpoint's path: is the weights verl trains (grpo with trainer: verl): they decide its outputs there.
  if (m.provider !== 'worker')
    return { provider: m.provider, model: m.model, ...sampling, ...(m.path !== undefined ? { path: m.path } : {}) };
  // A checkpoint from needs: is named by the upstream node's key, already part of the consumer's key.
  // vLLM samples with its own kernels and sampler: a served-by-vLLM entry's outputs are its own (named only when set,
  // so that the keys of entries without it stay as they were).
  return {
    provider: 'worker',
    model: m.model,
    path: m.path ?? null,
    checkpoint: m.checkpoint ?? null,
    tiny: m.tiny ?? null,
    lora_rank: m.lora_rank ?? null,
    ...sampling,
    ...(m.serve === 'vllm' ? { serve: 'vllm' } : {}),
  };
}

/** What a written `worker` entry serves, or why it names no weights (exactly one of path, checkpoint, tiny). */
export function workerWeights(
  m: WrittenModel,
): { path: string } | { checkpoint: string } | { tiny: number } | { error: string } {
  const given = [m.path !== undefined, m.checkpoint !== undefined, m.tiny !== undefined].filter(Boolean).length;
  if (given !== 1)
    return {
      error: `a worker model names exactly one of path: (a model folder), checkpoint: (a stage in needs:) or tiny: (a seed); this one names ${given}`,
    };
  if (m.path !== undefined) return { path: m.path };
  if (m.checkpoint !== undefined) return { checkpoint: m.checkpoint };
  return { tiny: m.tiny! };
}

/** The object without its undefined properties: a resolved entry holds only what was given or defaulted. */
function defined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
