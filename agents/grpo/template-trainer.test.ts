// The template trainer's update on hand-made samples.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { initCheckpoint, probabilities } from '../policies/template/model.js';
import { templateUpdate } from './template-trainer.js';

const fresh = () => initCheckpoint(['a', 'b', 'c'], ['bias', 'x']);
const opts = { lr: 0.1, clipLow: 0.2, clipHigh: 0.28, kl: 0, epochs: 1 };

test('a positive advantage raises the chosen action, a negative one lowers it', () => {
  const ck = fresh();
  const phi = [1, 0.5];
  const logp = Math.log(1 / 3);
  templateUpdate(
    ck,
    [
      { features: phi, action: 0, logprob: logp, advantage: 1 },
      { features: phi, action: 1, logprob: logp, advantage: -1 },
    ],
    opts,
  );
  const p = probabilities(ck.weights, phi);
  assert.ok(p[0] > 1 / 3 && p[1] < 1 / 3, JSON.stringify(p));
  assert.is(ck.step, 1);
});

test('zero advantages change nothing (a group with equal rewards)', () => {
  const ck = fresh();
  const stats = templateUpdate(ck, [{ features: [1, 1], action: 2, logprob: Math.log(1 / 3), advantage: 0 }], opts);
  assert.equal(ck.weights, fresh().weights);
  assert.is(stats.samples, 0);
});

test('clipping: past 1 + ε_high a positive advantage stops pushing', () => {
  const ck = fresh();
  // The action is already far likelier than when it was sampled: ratio = (1/3) / 0.1 > 1.28.
  const stats = templateUpdate(ck, [{ features: [1, 0], action: 0, logprob: Math.log(0.1), advantage: 1 }], opts);
  assert.is(stats.clip_fraction, 1);
  assert.equal(ck.weights, fresh().weights);
  // Inside the region it moves.
  const ck2 = fresh();
  const s2 = templateUpdate(ck2, [{ features: [1, 0], action: 0, logprob: Math.log(0.3), advantage: 1 }], opts);
  assert.is(s2.clip_fraction, 0);
  assert.ok(ck2.weights[0][0] > 0);
});

test.run();
