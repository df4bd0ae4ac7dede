// A grpo node's size: its rollouts, and on a verl cluster the GPUs it holds and a bound on their hours.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { GrpoParams } from './index.js';
import { grpoSize } from './size.js';

const P = {
  trainer: 'verl',
  policy: 'q',
  verl: { nodes: 2, gpus_per_node: 4 },
  steps: 10,
  batch_size: 4,
  group_size: 4,
  eval_every: 5,
  split: 'train',
  val_split: 'val',
  concurrency: 8,
  time_budget: 900,
} as unknown as GrpoParams;

test('verl: 2 × 4 GPUs held while 10 steps of 16 rollouts run 8 at a time, each within 900 s', () => {
  const ctx = {
    inputs: [{ tasks: { n: 20 }, split: { train: { n: 16 }, val: { n: 4 } } }],
    experimentDir: '/',
    models: {},
  };
  const s = grpoSize(P, ctx);
  assert.equal(
    s.work.map((w) => [w.n, w.unit]),
    [
      [{ n: 160 }, 'rollouts'],
      [{ n: 8 }, 'validation rollouts'],
    ],
  );
  assert.is(s.gpus, 8);
  // (10 × 2 rounds + 1 validation round) × 900 s × 8 GPUs = 42 GPU-hours at most.
  assert.equal(s.gpuHours?.n, { n: 42, atMost: true });
  assert.equal(grpoSize({ ...P, trainer: 'template' }, ctx).gpus, 0);
  assert.is(grpoSize({ ...P, trainer: 'template' }, ctx).gpuHours, undefined);
  assert.equal(grpoSize({ ...P, trainer: 'verl-export' }, ctx).work, []);
});

test.run();
