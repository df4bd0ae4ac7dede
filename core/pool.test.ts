import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mapLimit } from './pool.js';

const tick = () => new Promise((r) => setTimeout(r, 1));

test('results keep the items order, with never more than `limit` calls in flight', async () => {
  let inFlight = 0;
  let most = 0;
  const out = await mapLimit([5, 1, 4, 2, 3], 2, async (x, i) => {
    most = Math.max(most, ++inFlight);
    for (let k = 0; k < x; k++) await tick();
    inFlight--;
    return `${i}:${x}`;
  });
  assert.equal(out, ['0:5', '1:1', '2:4', '3:2', '4:3']);
  assert.is(most, 2);
});

test('an aborted signal stops taking items; a failure rejects and stops the others', async () => {
  const ac = new AbortController();
  const seen: number[] = [];
  const out = await mapLimit(
    [0, 1, 2, 3],
    1,
    async (x) => {
      seen.push(x);
      if (x === 1) ac.abort();
      return x;
    },
    ac.signal,
  );
  assert.equal(seen, [0, 1]);
  assert.equal(out, [0, 1, undefined, undefined]);
  const ran: number[] = [];
  const err = await mapLimit([0, 1, 2, 3], 1, async (x) => {
    ran.push(x);
    if (x === 1) throw new Error('boom');
    return x;
  }).catch((e: Error) => e);
  assert.match((err as Error).message, 'boom');
  assert.equal(ran, [0, 1]);
});

test.run();
