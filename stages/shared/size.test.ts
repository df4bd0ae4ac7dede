// Counts of work: products and sums that stay unknown or bounded as their parts are, and a finished entry counted.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { capped, countText, entrySize, exactly, product, tasksRead, total } from './size.js';

test('a product or sum is unknown when a part is, a bound when a part is', () => {
  assert.equal(product(exactly(3), exactly(4)), { n: 12 });
  assert.equal(product(exactly(3), { n: 4, atMost: true }), { n: 12, atMost: true });
  assert.is(product(exactly(3), undefined), undefined);
  assert.is(total([]), undefined);
  assert.equal(total([exactly(1), { n: 2, atMost: true }]), { n: 3, atMost: true });
  assert.equal(capped(undefined, 5), { n: 5, atMost: true });
  assert.equal(capped(exactly(9), 5), { n: 5 });
  assert.equal(capped(exactly(3), 5), exactly(3));
  assert.is(countText(undefined), '?');
  assert.is(countText({ n: 1200, atMost: true }), '≤ 1,200');
  assert.is(countText(exactly(0.25)), '0.25');
});

test("a finished entry's tasks, split and trajectories are counted; inputs that give tasks are summed", async () => {
  const dir = await mkdtemp(join(tmpdir(), 'mlepipe-size-'));
  for (const id of ['a', 'b', 'c']) {
    await mkdir(join(dir, 'tasks', id, 'private'), { recursive: true });
    await writeFile(join(dir, 'tasks', id, 'private', 'evaluator.py'), '');
  }
  await mkdir(join(dir, 'tasks', 'not-a-task'));
  await writeFile(join(dir, 'split.json'), JSON.stringify({ train: ['a', 'b'], val: ['c'] }));
  await writeFile(join(dir, 'trajectories.jsonl'), '{}\n{}\n');
  const held = entrySize(dir);
  assert.equal(held, { tasks: exactly(3), split: { train: exactly(2), val: exactly(1) }, trajectories: exactly(2) });
  const ctx = { inputs: [held, {}, { tasks: exactly(4) }], experimentDir: dir, models: {} };
  assert.equal(tasksRead({}, ctx), { n: 7 });
  assert.equal(tasksRead({ split: 'val' }, ctx), exactly(1));
  assert.equal(tasksRead({ limit: 5 }, ctx), { n: 5 });
  // An input that will hold tasks in numbers nobody knows yet makes the whole unknown.
  assert.is(tasksRead({}, { ...ctx, inputs: [held, { tasks: undefined }] }), undefined);
  assert.equal(tasksRead({ tasks: '.' }, { ...ctx, inputs: [] }), exactly(3));
});

test.run();
