import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { retention } from './retention.js';

const upTo = (n: number) => Array.from({ length: n }, (_, i) => i + 1);

test('every step saved, the default: the resume point whole and the last two marked steps as weights', () => {
  assert.equal(retention(upTo(5), 5, { every: 1, steps: 10, keep: 2 }), { remove: [1, 2, 3], trim: [4] });
  // Applied step by step, the store never holds more than the resume point and two others.
  const held = new Set<number>();
  for (let k = 1; k <= 10; k++) {
    held.add(k);
    for (const j of retention([...held], k, { every: 1, steps: 10, keep: 2 }).remove) held.delete(j);
    assert.ok(held.size <= 2, `after step ${k}: ${[...held]}`);
  }
  assert.equal(
    [...held].sort((a, b) => a - b),
    [9, 10],
  );
});

test('checkpoint_every marks the kept steps; the unmarked resume point of the step before goes', () => {
  assert.equal(retention([5, 10, 15, 16], 17, { every: 5, steps: 40, keep: 2 }), { remove: [5, 16], trim: [10, 15] });
  // The last step counts as marked.
  assert.equal(retention([10, 12], 13, { every: 5, steps: 13, keep: 2 }), { remove: [12], trim: [10] });
});

test('keep_checkpoints 0 keeps every marked step', () => {
  assert.equal(retention([2, 4, 5], 6, { every: 2, steps: 9, keep: 0 }), { remove: [5], trim: [2, 4] });
});

test("best-val's step so far stays (as weights) whatever its age", () => {
  assert.equal(retention(upTo(5), 5, { every: 1, steps: 10, keep: 2, selected: 1 }), { remove: [2, 3], trim: [1, 4] });
  // One that retention had already dropped is not brought back.
  assert.equal(retention([4, 5], 5, { every: 1, steps: 10, keep: 1, selected: 2 }), { remove: [4], trim: [] });
});

test.run();
