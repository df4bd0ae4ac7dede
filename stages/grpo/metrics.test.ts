// A validation pass's rates count its crashed rollouts: a crash is a failure
// of the policy's run, not a rollout that did not happen.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { Trajectory } from '../../agents/trajectory.js';
import type { Rollout } from './batch.js';
import { valMetrics } from './metrics.js';

const ran = (sample: number, reward: number, execute: number, bronze: number): Rollout =>
  ({
    task_id: 't',
    group_id: 'g',
    sample,
    reward,
    ended: 'submitted',
    turns: [],
    messages: [],
    variables: { execute, bronze },
  }) as unknown as Trajectory;
const crashed = (sample: number): Rollout => ({
  crashed: true,
  task_id: 't',
  group_id: 'g',
  sample,
  error: 'the policy endpoint refused the request',
});

test('crashed validation rollouts stay in the denominators (as 0) and are counted in val_crashes', () => {
  // Two ran (rewards 1 and 0.5, one valid and medalled, one valid), two crashed: over 4, not 2.
  const m = valMetrics([ran(0, 1, 1, 1), crashed(1), ran(2, 0.5, 1, 0), crashed(3)]);
  assert.equal(m, { val_reward: 0.375, val_valid: 0.5, val_any_medal: 0.25, val_crashes: 2 });
});

test('a pass with no crashes has val_crashes 0 and the plain means', () => {
  assert.equal(valMetrics([ran(0, 0.2, 1, 0), ran(1, 0.4, 0, 0)]), {
    val_reward: 0.3,
    val_valid: 0.5,
    val_any_medal: 0,
    val_crashes: 0,
  });
});

test('an empty pass reads 0 everywhere rather than NaN', () => {
  assert.equal(valMetrics([]), { val_reward: 0, val_valid: 0, val_any_medal: 0, val_crashes: 0 });
});

test.run();
