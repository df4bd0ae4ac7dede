// A policy served by any OpenAI-compatible chat endpoint (OpenAI, vLLM,
// SGLang, Ollama), through the factory's client: per-model concurrency,
// retries with backoff, the response cache and token accounting.
import type { ModelSpec } from '../../core/models.js';
import { LlmClient } from '../llm/client.js';
import type { Policy, PolicyReply, PolicyRequest } from './types.js';

export interface SamplingOptions {
  temperature?: number;
  max_tokens?: number;
  seed?: number;
  stop?: string[];
  logprobs?: boolean;
}

export function openaiPolicy(
  name: string,
  spec: ModelSpec,
  opts: { cacheDir?: string; sampling?: SamplingOptions; log?: (m: string) => void },
): Policy {
  const client = new LlmClient({ name, spec, cacheDir: opts.cacheDir, log: opts.log });
  const s = opts.sampling ?? {};
  return {
    name,
    kind: 'openai',
    usage: () => client.usage,
    async act(req: PolicyRequest, signal?: AbortSignal): Promise<PolicyReply> {
      const r = await client.chat(
        {
          messages: req.messages,
          temperature: s.temperature,
          max_tokens: s.max_tokens,
          // A fixed seed still gives each rollout of a task its own sample.
          // An ask again must not be answered by the same cached or seeded sample.
          seed: s.seed === undefined ? undefined : s.seed + req.sample + 7919 * (req.attempt ?? 0),
          stop: s.stop,
          logprobs: s.logprobs,
          sample: req.sample,
          ...(req.tool ? { tool: req.tool } : {}),
          ...(req.attempt ? { attempt: req.attempt } : {}),
        },
        signal,
      );
      return {
        // A forced function call answers in its arguments; a server that ignores tools answers in text.
        text: r.tool_arguments ?? r.content,
        usage: r.usage,
        cached: r.cached,
        logprobs: r.logprobs,
        ...(r.tokens ? { tokens: r.tokens } : {}),
      };
    },
  };
}
