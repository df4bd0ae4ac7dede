import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { HostPool, sizeBytes } from './hosts.js';
import { resolveHost } from '../config/host-settings.js';
import type { WrittenHost } from '../config/types.js';

/** Hosts as the settings resolve them. */
const resolved = (hosts: Record<string, WrittenHost>) =>
  Object.fromEntries(Object.entries(hosts).map(([n, h]) => [n, resolveHost(h, '/')]));

const HOSTS = resolved({
  a: { docker: 'tcp://a:2375', gpus: 2, labels: ['h200'] },
  b: { docker: 'tcp://b:2375', gpus: ['4', '7'], labels: ['h200'], env: { X: 1 } },
  any: { docker: 'tcp://c:2375', gpus: 'all' as const },
  cpu: { docker: 'tcp://d:2375' },
});

test('one-GPU nodes share a host, spill over to the next with the label, and wait when all are taken', () => {
  const pool = new HostPool(HOSTS);
  const held = [1, 2, 3, 4].map(() => pool.take('h200', 1)!);
  assert.equal(
    held.map((h) => [h.placement.name, h.placement.gpus]),
    [
      ['a', { ids: ['0'] }],
      ['a', { ids: ['1'] }],
      ['b', { ids: ['4'] }],
      ['b', { ids: ['7'] }],
    ],
  );
  assert.is(pool.take('h200', 1), undefined);
  held[2].give();
  held[2].give(); // giving twice gives once
  assert.equal(pool.take('h200', 1)!.placement.gpus, { ids: ['4'] });
  assert.is(pool.take('b', 1), undefined);
  assert.equal(held[3].placement.env, { X: '1' });
});

test('a node asking for more than is free waits even if some is free; all and CPU hosts', () => {
  const pool = new HostPool(HOSTS);
  const first = pool.take('a', 1)!;
  assert.is(pool.take('a', 2), undefined);
  first.give();
  assert.equal(pool.take('a', 2)!.placement.gpus, { ids: ['0', '1'] });
  assert.equal(pool.take('any', 3)!.placement.gpus, { count: 3 });
  assert.equal(pool.take('any', 5)!.placement.gpus, { count: 5 });
  assert.is(pool.take('cpu', 0)!.placement.gpus, undefined);
  assert.is(pool.take('cpu', 1), undefined);
});

test('after a host fault: the other matching hosts first (waiting for them when busy), all of them once each has failed', () => {
  const pool = new HostPool(HOSTS);
  const one = pool.take('h200', 1, new Set(['a']))!;
  assert.is(one.placement.name, 'b');
  // b has one GPU free and a has two, but a failed the node: it waits for b.
  assert.is(pool.take('h200', 2, new Set(['a'])), undefined);
  one.give();
  assert.equal(pool.take('h200', 2, new Set(['a']))!.placement, {
    name: 'b',
    docker: 'tcp://b:2375',
    env: { X: '1' },
    gpus: { ids: ['4', '7'] },
  } as never);
  assert.is(pool.take('h200', 1, new Set(['a', 'b']))!.placement.name, 'a');
  // A host that could never hold the node is no alternative.
  const sized = new HostPool(
    resolved({
      big: { docker: 'tcp://big:2375', gpus: 4, labels: ['x'] },
      small: { docker: 'tcp://small:2375', gpus: 1, labels: ['x'] },
    }),
  );
  assert.is(sized.take('x', 2, new Set(['big']))!.placement.name, 'big');
});

test("a node's sandboxes take their GPUs from the same pool as on: nodes: whole runs, as many as the node holds at once, given back once", () => {
  const pool = new HostPool(HOSTS);
  // A trainer on a holds GPU 0: the sandboxes beside it get only 1, then b's.
  const trainer = pool.take('a', 1)!;
  const lent = pool.lendSandboxes(['a', 'b', 'any', 'cpu'], 1, 2)!;
  assert.equal(Object.fromEntries(lent.gpus), { a: ['1'], b: ['4'], any: 'all' });
  // b's 7 is still free; nothing is left on a, for a node or for another node's sandboxes.
  assert.is(pool.take('a', 1), undefined);
  assert.equal(Object.fromEntries(pool.lendSandboxes(['a', 'b'], 1, 4)!.gpus), { a: [], b: ['7'] });
  // Runs of 2 GPUs fit on no host now: the node waits.
  assert.is(pool.lendSandboxes(['a', 'b'], 2, 1), undefined);
  lent.give();
  lent.give(); // giving twice gives once
  trainer.give();
  // b has only 4 free (7 is still lent): no run of 2 there.
  assert.equal(Object.fromEntries(pool.lendSandboxes(['a', 'b'], 2, 3)!.gpus), { a: ['0', '1'], b: [] });
  assert.equal(pool.take('h200', 1)!.placement.gpus, { ids: ['4'] });
});

test('shm_size: bytes, or sizes with binary units as Docker reads them', () => {
  assert.equal(['16g', '512MiB', '1.5GiB', '64k', '100', '2 TB'].map(sizeBytes), [
    16 * 1024 ** 3,
    512 * 1024 ** 2,
    1.5 * 1024 ** 3,
    64 * 1024,
    100,
    2 * 1024 ** 4,
  ]);
  assert.is(sizeBytes(4096), 4096);
});

test.run();
