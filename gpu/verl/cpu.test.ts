// A CPU run's settings (gpu/verl/cpu.ts): the keys that replace the GPU layout, the job's environment, the
// head size vLLM's CPU build serves, Hydra overrides replaced by key (a `+` key too), and the user's Ray token
// found as Ray's own clients find it.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CPU_MODULE, cpuEnv, cpuSftOverrides, readModelShape, vllmCpuProblem } from './cpu.js';
import { rayToken } from './job.js';
import { TURN_CREDIT_MODULE, type OverrideOptions, verlOverrides, withOverrides } from './overrides.js';
import type { Layout } from './scale.js';
import { sftOverrides } from './sft-export.js';

const BASE: OverrideOptions = {
  model: '/models/tiny',
  groupSize: 2,
  batchSize: 2,
  steps: 2,
  maxTurns: 3,
  lr: 1e-4,
  clipLow: 0.2,
  clipHigh: 0.28,
  kl: 0,
  temperature: 1,
  advantage: 'grpo',
  lossAggMode: 'token-mean',
  nodes: 1,
  gpusPerNode: 1,
  rollout: 'vllm',
  promptLength: 1536,
  responseLength: 6656,
  checkpointEvery: 1,
  evalEvery: 0,
};

const keys = (overrides: readonly string[]) => overrides.map((o) => o.slice(0, o.indexOf('=')).replace(/^\+/, ''));

test('device: cpu replaces the GPU layout with the CPU keys: no flash-attention, SDPA, eager vLLM without sleep mode, its context the run’s', () => {
  const layout: Layout = {
    offload: false,
    sp: 1,
    tokenBudget: 32768,
    gpuMemoryUtilization: 0.85,
    estimate: { state: 1, activations: 1, logits: 1, training: 3, rollout: 1, hostOffload: 0 },
  };
  const gpu = verlOverrides({ ...BASE, layout });
  const cpu = verlOverrides({ ...BASE, layout, device: 'cpu' });
  assert.ok(gpu.includes('actor_rollout_ref.model.use_remove_padding=true'), gpu.join(' '));
  for (const o of [
    'trainer.device=cpu',
    'actor_rollout_ref.model.use_remove_padding=false',
    '+actor_rollout_ref.model.override_config.attn_implementation=sdpa',
    '+actor_rollout_ref.rollout.enable_sleep_mode=false',
    'actor_rollout_ref.rollout.enforce_eager=true',
    'actor_rollout_ref.rollout.max_model_len=8192',
  ])
    assert.ok(cpu.includes(o), `${o} in ${cpu.join(' ')}`);
  assert.not.ok(cpu.some((o) => o.includes('gpu_memory_utilization')));
  // Hydra refuses a key given twice.
  assert.is(new Set(keys(cpu)).size, cpu.length);
});

test("the SFT export's CPU keys replace the GPU ones by key, never beside them", () => {
  const o = {
    model: '/m',
    epochs: 1,
    lr: 1e-4,
    schedule: 'constant' as const,
    warmup: 0,
    maxLength: 1024,
    batchSize: 1,
    microBatchSize: 1,
    maxGradNorm: 1,
    gradientCheckpointing: false,
    seed: 0,
    nodes: 1,
    gpusPerNode: 1,
    gpuMemoryGib: 80,
  };
  const merged = withOverrides(sftOverrides(o, false), cpuSftOverrides());
  assert.ok(
    merged.includes('model.use_remove_padding=false') && !merged.includes('model.use_remove_padding=true'),
    merged.join(' '),
  );
  assert.is(new Set(keys(merged)).size, merged.length);
  // A `+` key replaces the plain one of the same name.
  assert.equal(withOverrides(['a.b=1', 'c=2'], { '+a.b': '3' }), ['c=2', '+a.b=3']);
});

test('the job’s environment loads the CPU platform module beside the modules every export loads', () => {
  const env = cpuEnv({ kvCacheGib: 2 }, [TURN_CREDIT_MODULE]);
  assert.is(env.VERL_USE_EXTERNAL_MODULES, `${TURN_CREDIT_MODULE},${CPU_MODULE}`);
  assert.equal(
    [env.VERL_PLATFORM, env.VERL_ENGINE_DEVICE, env.VLLM_TARGET_DEVICE, env.VLLM_CPU_KVCACHE_SPACE],
    ['cpu', 'cuda', 'cpu', '2'],
  );
});

test("vLLM's CPU build serves heads of 32 or more: a head_dim of 16 is refused with the way to a model it serves", async () => {
  assert.match(vllmCpuProblem({ head_dim: 16 }) ?? '', /heads of 32 or more.*are 16.*--preset vllm/);
  assert.is(vllmCpuProblem({ head_dim: 32 }), undefined);
  // Without head_dim, the hidden size over the heads.
  assert.match(vllmCpuProblem({ hidden_size: 64, num_attention_heads: 4 }) ?? '', /are 16/);
  assert.is(vllmCpuProblem({ hidden_size: 4096, num_attention_heads: 32 }), undefined);
  const dir = await mkdtemp(join(tmpdir(), 'shape-'));
  assert.is(readModelShape(dir), undefined);
  await writeFile(join(dir, 'config.json'), JSON.stringify({ head_dim: 16, max_position_embeddings: 8192 }));
  assert.equal(readModelShape(dir), { head_dim: 16, max_position_embeddings: 8192 });
});

test("a Ray client's token: RAY_AUTH_TOKEN, else the file RAY_AUTH_TOKEN_PATH names, else none", async () => {
  const dir = await mkdtemp(join(tmpdir(), 'token-'));
  await writeFile(join(dir, 't'), 'abc\n');
  assert.is(rayToken({ RAY_AUTH_TOKEN: 'xyz' }), 'xyz');
  assert.is(rayToken({ RAY_AUTH_TOKEN_PATH: join(dir, 't') }), 'abc');
  assert.is(rayToken({ RAY_AUTH_TOKEN_PATH: join(dir, 'missing') }), undefined);
});

test.run();
