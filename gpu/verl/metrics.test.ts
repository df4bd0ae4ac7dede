import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { sftCurve, verlCurve } from './metrics.js';

test("verl's file-logger lines become metrics.jsonl rows: training reward, entropy, turns; validation from its own keys", () => {
  const raw =
    [
      {
        step: 1,
        data: { 'critic/score/mean': 0.123456, 'actor/entropy': 1.5, 'num_turns/mean': 6, 'critic/score/max': 1 },
      },
      {
        step: 2,
        data: {
          'critic/score/mean': 0.5,
          'val-core/mlepipe/reward/mean@1': 0.25,
          'val-aux/mlepipe/mlepipe_execute/mean@1': 0.75,
          'val-aux/mlepipe/mlepipe_bronze/mean@1': 0,
        },
      },
    ]
      .map((x) => JSON.stringify(x))
      .join('\n') + '\n';
  const rows = verlCurve(raw);
  assert.is(rows.length, 2);
  assert.equal(
    [rows[0].step, rows[0].reward_mean, rows[0].entropy, rows[0].turns, rows[0].valid_rate],
    [1, 0.1235, 1.5, 6, null],
  );
  assert.not.ok('val_reward' in rows[0]);
  assert.equal([rows[1].val_reward, rows[1].val_valid, rows[1].val_any_medal, rows[1].entropy], [0.25, 0.75, 0, null]);
  assert.equal(verlCurve(''), []);
});

test("verl's SFT metrics: a row per step with its epoch; the validation line of a step joins that step's row; the learning rate unrounded", () => {
  const raw = [
    { step: 1, data: { 'train/loss': 2.5, 'train/lr': 1e-5, 'train/global_tokens': 900, 'train/grad_norm': 3 } },
    { step: 2, data: { 'train/loss': 2.0, 'train/lr': 5e-6, 'train/global_tokens': 800 } },
    { step: 2, data: { 'val/loss': 2.25 } },
    { step: 3, data: { 'train/loss': 1.5, 'train/lr': 0, 'train/global_tokens': 700 } },
  ]
    .map((x) => JSON.stringify(x))
    .join('\n');
  const rows = sftCurve(raw, 2);
  assert.equal(
    rows.map((r) => [r.step, r.epoch, r.train_loss, r.val_loss, r.tokens]),
    [
      [1, 1, 2.5, null, 900],
      [2, 1, 2, 2.25, 800],
      [3, 2, 1.5, null, 700],
    ],
  );
  assert.equal([rows[0].lr, rows[1].lr, rows[0].grad_norm], [1e-5, 5e-6, 3]);
});

test.run();
