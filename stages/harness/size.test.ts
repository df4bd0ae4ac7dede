// A harness node's size in the plan: its runs from the mlebench input's competitions, `limit` applied, and a
// bound on the hours they take from each run's time limit.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { harness, type HarnessParams } from './index.js';

const P = {
  harness: 'aira-dojo',
  checkout: 'c',
  python: 'py',
  solver: 'aide_greedy',
  policies: ['a', 'b'],
  repeats: 3,
  time_per_run_s: 3000,
  settings: {},
  concurrency: 2,
} satisfies HarnessParams;

const ctx = (tasks: number | undefined, models = {}) => ({
  inputs: [{ tasks: tasks === undefined ? undefined : { n: tasks } }],
  experimentDir: '/',
  models,
});

test('runs are competitions × policies × repeats; hours at most the runs, concurrency at a time, each with its grace', () => {
  const s = harness.size!(P, ctx(5));
  assert.equal(s.work[0], { n: { n: 30 }, unit: 'runs', of: '5 competitions × 2 policies × 3 repeats' });
  // 30 runs two at a time: 15 rounds of 3000 s + 60 s grace = 12.75 hours, at most 13.
  assert.equal([s.work[1].n, s.work[1].unit], [{ n: 13, atMost: true }, 'hours']);
  assert.is(s.gpus, 0);
});

test('limit caps the competitions, total_s the hours; unknown competitions leave both unknown', () => {
  const s = harness.size!({ ...P, limit: 2, total_s: 1800 }, ctx(5));
  assert.equal(s.work[0].n, { n: 12 });
  assert.equal(s.work[1].n, { n: 0.5, atMost: true });
  assert.equal(harness.size!({ ...P, limit: 2 }, ctx(undefined)).work[0].n, { n: 12, atMost: true });
  assert.equal(
    harness.size!(P, ctx(undefined)).work.map((w) => w.n),
    [undefined, undefined],
  );
});

test("a policy served by vLLM holds this machine's GPUs: the size does not say none", () => {
  const models = { a: { provider: 'worker', path: '/m' } };
  assert.is(harness.size!(P, ctx(5, models)).gpus, undefined);
});
test.run();
