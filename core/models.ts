/** A `models:` entry: a named policy endpoint that stages refer to by name. */
export interface ModelSpec {
  /** Only OpenAI-compatible endpoints for now (OpenAI, vLLM, SGLang, Ollama). */
  provider: 'openai';
  /** Endpoint root, e.g. http://gpu1:8000/v1. */
  base_url?: string;
  /** Model name the endpoint serves. */
  model: string;
  /** Name of the environment variable that holds the API key (never the key itself). */
  api_key_env?: string;
  temperature?: number;
  max_tokens?: number;
  /** Requests in flight at once against this endpoint. */
  concurrency?: number;
  timeout_s?: number;
  /** USD per million prompt / completion tokens, for the cost estimate in node metrics (default 0). */
  price_in_per_1m?: number;
  price_out_per_1m?: number;
}

/** What of a model decides its outputs, and so goes into node keys (not where it is served). */
export function modelIdentity(m: ModelSpec): Record<string, unknown> {
  return { provider: m.provider, model: m.model, temperature: m.temperature ?? null, max_tokens: m.max_tokens ?? null };
}
