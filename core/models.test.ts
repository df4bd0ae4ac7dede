// A models: entry resolved at load: one shape a provider, defaults filled in once, and node keys that do not
// depend on whether a request setting was written or filled in.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { MODEL_DEFAULTS, modelIdentity, resolveModel, workerWeights, type WrittenModel } from './models.js';

test('defaults are filled in; what was left out stays out', () => {
  assert.equal(resolveModel({ provider: 'openai', model: 'gpt', base_url: 'http://x/v1' }), {
    model: 'gpt',
    base_url: 'http://x/v1',
    ...MODEL_DEFAULTS,
    provider: 'openai',
  });
  const w = resolveModel({ provider: 'worker', model: 'm', tiny: 3, concurrency: 2, lora_rank: 0 });
  assert.equal(w, {
    model: 'm',
    lora_rank: 0,
    ...MODEL_DEFAULTS,
    concurrency: 2,
    provider: 'worker',
    serve: 'worker',
    tiny: 3,
  });
});

test("an entry's identity is the same written or resolved: filling in defaults moves no key", () => {
  const entries: WrittenModel[] = [
    { provider: 'openai', model: 'gpt', base_url: 'http://x/v1', temperature: 0.2 },
    { provider: 'openai', model: 'q', path: 'Qwen/Qwen3-8B', retries: 1 },
    { provider: 'worker', model: 'm', path: 'weights', lora_rank: 8, max_tokens: 64 },
    { provider: 'worker', model: 'm', checkpoint: 'sft' },
    { provider: 'worker', model: 'm', tiny: 0, serve: 'worker' },
    { provider: 'worker', model: 'm', path: 'weights', serve: 'vllm' },
  ];
  for (const m of entries) {
    const written = {
      provider: m.provider,
      model: m.model,
      ...(m.provider === 'worker'
        ? {
            path: m.path ?? null,
            checkpoint: m.checkpoint ?? null,
            tiny: m.tiny ?? null,
            lora_rank: m.lora_rank ?? null,
          }
        : {}),
      temperature: m.temperature ?? null,
      max_tokens: m.max_tokens ?? null,
      ...(m.provider === 'openai' && m.path !== undefined ? { path: m.path } : {}),
      ...(m.serve === 'vllm' ? { serve: 'vllm' } : {}),
    };
    assert.equal(modelIdentity(resolveModel(m)), written, JSON.stringify(m));
  }
});

test('a written worker entry names exactly one set of weights', () => {
  assert.equal(workerWeights({ provider: 'worker', model: 'm', checkpoint: 'sft' }), { checkpoint: 'sft' });
  assert.match((workerWeights({ provider: 'worker', model: 'm' }) as { error: string }).error, /names 0$/);
  assert.match(
    (workerWeights({ provider: 'worker', model: 'm', tiny: 1, path: 'w' }) as { error: string }).error,
    /names 2$/,
  );
});

test.run();
