// The rollout's tensor parallelism in the exported overrides: chosen from the
// model's size and the node's GPUs so that verl's replica count
// (GPUs / (tp × dp × pp), workers/rollout/llm_server.py) is never 0, and the
// weights' path, not the entry's label, as actor_rollout_ref.model.path.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtemp, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ParamError } from '../../core/errors.js';
import { type OverrideOptions, verlModelPath, verlOverrides } from './overrides.js';
import { paramsBillions, rolloutTp } from './scale.js';

const BASE: OverrideOptions = {
  model: 'Qwen/Qwen3-8B',
  groupSize: 4,
  batchSize: 16,
  steps: 1,
  maxTurns: 20,
  lr: 1e-6,
  clipLow: 0.2,
  clipHigh: 0.28,
  kl: 0,
  temperature: 1,
  advantage: 'grpo',
  lossAggMode: 'token-mean',
  nodes: 1,
  gpusPerNode: 8,
  rollout: 'vllm',
  promptLength: 4096,
  responseLength: 28672,
  checkpointEvery: 1,
  evalEvery: 0,
};
const value = (overrides: string[], key: string) => overrides.find((o) => o.startsWith(`${key}=`))?.slice(key.length + 1);
const TP = 'actor_rollout_ref.rollout.tensor_model_parallel_size';

test('sizes read from model names and paths', () => {
  assert.equal(['Qwen/Qwen3-8B', 'Qwen3-14B', 'Qwen/Qwen3-30B-A3B', '/models/qwen3-0.6b', 'meta-llama/Llama-3.1-8B-Instruct', 'tiny-coder'].map(paramsBillions), [8, 14, 30, 0.6, 8, undefined]);
});

test('one replica per GPU up to 16B; larger models split, within a node', () => {
  assert.equal([rolloutTp('Qwen/Qwen3-8B', 1), rolloutTp('Qwen/Qwen3-8B', 8), rolloutTp('Qwen/Qwen3-14B', 8), rolloutTp('Qwen/Qwen3-30B-A3B', 8), rolloutTp('Qwen/Qwen3-30B-A3B', 1)], [1, 1, 1, 2, 1]);
  // verl's default of 2 would leave one GPU without a replica: the export always says.
  assert.is(value(verlOverrides({ ...BASE, gpusPerNode: 1 }), TP), '1');
  assert.is(value(verlOverrides({ ...BASE, model: 'Qwen/Qwen3-30B-A3B' }), TP), '2');
  assert.is(value(verlOverrides({ ...BASE, rolloutTp: 4 }), TP), '4');
  assert.throws(
    () => verlOverrides({ ...BASE, gpusPerNode: 1, rolloutTp: 2 }),
    (e: unknown) => e instanceof ParamError && e.param.join('.') === 'verl.rollout_tp',
  );
  assert.throws(
    () => verlOverrides({ ...BASE, rolloutTp: 3 }),
    (e: unknown) => e instanceof ParamError,
  );
});

test('the weights path: a folder beside the experiment made absolute, a hub id as written', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'verl-path-'));
  await mkdir(join(dir, 'weights'));
  assert.is(verlModelPath({ provider: 'openai', model: 'qwen3-8b', path: 'Qwen/Qwen3-8B' }, dir), 'Qwen/Qwen3-8B');
  assert.is(verlModelPath({ provider: 'openai', model: 'qwen3-8b', path: 'weights' }, dir), join(dir, 'weights'));
  assert.is(verlModelPath({ provider: 'openai', model: 'qwen3-8b', path: './later' }, dir), join(dir, 'later'));
  assert.is(verlModelPath({ provider: 'worker', model: 'm', path: '/shared/Qwen3-8B' }, dir), '/shared/Qwen3-8B');
  assert.is(value(verlOverrides({ ...BASE, model: verlModelPath({ provider: 'openai', model: 'qwen3-8b', path: 'weights' }, dir) }), 'actor_rollout_ref.model.path'), join(dir, 'weights'));
});

test('validation before training only when validation was asked for (eval_every)', () => {
  assert.is(value(verlOverrides(BASE), 'trainer.val_before_train'), 'false');
  assert.is(value(verlOverrides({ ...BASE, evalEvery: 5 }), 'trainer.val_before_train'), 'true');
});

test.run();
