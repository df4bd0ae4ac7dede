// select: best-val — the rule that picks the step a grpo node hands on, and what validation refuses: no
// validation, a validation step without a checkpoint, verl's own retention. select: last keeps a node's key.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { resolveGrpo } from './index.js';
import type { CurveRow } from './curve.js';
import { bestValidation, keptStep, selectIssues } from './select.js';

const every = () => true;

test('the highest val_reward among checkpointed validation steps; ties go to the earlier step', () => {
  const curve: CurveRow[] = [
    { step: 0, val_reward: 0.9 },
    { step: 1, reward_mean: 0.1 },
    { step: 2, val_reward: 0.4 },
    { step: 3, val_reward: 0.7 },
    { step: 4, val_reward: 0.7 },
    { step: 5, val_reward: null },
    { step: 6, val_reward: 0.2 },
  ];
  // Step 0 (verl's pass before training) has no checkpoint of the run.
  assert.equal(bestValidation(curve, every), { step: 3, val_reward: 0.7 });
  assert.equal(bestValidation([...curve].reverse(), every), { step: 3, val_reward: 0.7 });
  assert.equal(
    bestValidation(curve, (k) => k % 2 === 0),
    { step: 4, val_reward: 0.7 },
  );
  assert.is(
    bestValidation(curve, (k) => k === 5),
    undefined,
  );
  const kept = keptStep({ steps: 7, checkpoint_every: 3 });
  assert.equal([1, 3, 6, 7].map(kept), [false, true, true, true]);
});

test('select: last is what no select: does, so it leaves the key alone', () => {
  assert.equal(resolveGrpo({ select: 'last' }), resolveGrpo({}));
  assert.is(resolveGrpo({ select: 'best-val' }).select, 'best-val');
});

const base = {
  select: 'best-val' as const,
  trainer: 'template' as const,
  steps: 6,
  eval_every: 0,
  checkpoint_every: 1,
  keep_checkpoints: 2,
};
const refused = (over: Partial<typeof base> | Record<string, unknown>) =>
  selectIssues({ ...base, ...over } as never).map((i) => `${i.param.join('.')}: ${i.message}`);

test('validation refuses a best-val it cannot honour, at select:', () => {
  assert.match(refused({}).join('\n'), /^select: select: best-val picks a validated step; set eval_every/);
  assert.match(
    refused({ eval_every: 2, checkpoint_every: 4 }).join('\n'),
    /^select: .*step 2 validates \(eval_every: 2\) without one \(checkpoint_every: 4\)/,
  );
  assert.match(
    refused({ trainer: 'verl-export', eval_every: 2 }).join('\n'),
    /^select: select: best-val on verl .*write keep_checkpoints: 0/,
  );
  // Validation every 4 steps of checkpoints every 2, and a last step (5) that is both: fine; likewise on verl
  // with every checkpoint kept, and select: last whatever the rest.
  assert.equal(refused({ steps: 5, eval_every: 4, checkpoint_every: 2 }), []);
  assert.equal(refused({ trainer: 'verl', eval_every: 2, keep_checkpoints: 0 }), []);
  assert.equal(refused({ select: 'last' }), []);
});

test.run();
