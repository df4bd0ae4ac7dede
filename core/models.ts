/**
 * A `models:` entry: a named policy that stages refer to by name. `openai`: an
 * OpenAI-compatible endpoint that is already running (OpenAI, vLLM, SGLang,
 * Ollama, a trainer worker started by hand). `worker`: weights that a node
 * serves itself, for its lifetime, on a trainer worker started here
 * (gpu/trainer/local.ts): a model folder, a checkpoint an upstream stage
 * wrote, or the tiny random-weight model tests use.
 */
export interface ModelSpec {
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

/** What a `worker` entry serves, or why it names no weights (exactly one of path, checkpoint, tiny). */
export function workerWeights(
  m: ModelSpec,
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
