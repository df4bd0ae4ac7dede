import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { collectGarbage } from './gc.js';
import { CacheStore } from './store.js';
import type { Manifest } from './manifest.js';
import { tryLock } from './locks.js';
import { fakeManifest } from '../../test/helpers.js';

const KEY = 'a'.repeat(64);
const manifest = (over: Partial<Manifest> = {}): Manifest => fakeManifest({ key: KEY, ...over });

test('an entry appears only when committed, and the first commit of a key stands', async () => {
  const store = new CacheStore(await mkdtemp(join(tmpdir(), 'mlepipe-store-')));
  const s1 = await store.staging(KEY);
  await writeFile(join(s1, 'out.txt'), 'first');
  assert.is(await store.has(KEY), false);
  await store.commit(s1, manifest({ node: 'first' }));
  assert.is(await store.has(KEY), true);
  const s2 = await store.staging(KEY);
  await writeFile(join(s2, 'out.txt'), 'second');
  await store.commit(s2, manifest({ node: 'second' }));
  assert.is(await readFile(join(store.entryDir(KEY), 'out.txt'), 'utf8'), 'first');
  assert.equal(await readdir(join(store.root, 'tmp')), []);
  // A forced rerun replaces it.
  const s3 = await store.staging(KEY);
  await writeFile(join(s3, 'out.txt'), 'third');
  await store.replace(s3, manifest({ node: 'third' }));
  assert.is(await readFile(join(store.entryDir(KEY), 'out.txt'), 'utf8'), 'third');
  assert.is((await store.manifest(KEY))?.node, 'third');
});

test('listed: every folder under nodes/ (a damaged one too), none before the cache exists', async () => {
  const store = new CacheStore(join(await mkdtemp(join(tmpdir(), 'mlepipe-store-')), 'cache'));
  assert.equal(await store.listed(), new Set());
  const s = await store.staging(KEY);
  await store.commit(s, manifest());
  const other = 'b'.repeat(64);
  await mkdir(store.entryDir(other), { recursive: true });
  assert.equal(await store.listed(), new Set([KEY, other]));
  assert.equal((await store.check(other)).state, 'damaged');
});

test('items are whole or absent, listed by id', async () => {
  const store = new CacheStore(await mkdtemp(join(tmpdir(), 'mlepipe-items-')));
  const items = store.items(KEY);
  assert.is(await items.get('task-1'), undefined);
  await items.put('task-1', async (dir) => writeFile(join(dir, 'x'), '1'));
  await items.put('task-2', async (dir) => writeFile(join(dir, 'x'), '2'));
  try {
    await items.put('task-3', async () => {
      throw new Error('crash mid-item');
    });
  } catch {
    // expected
  }
  assert.equal(await items.list(), ['task-1', 'task-2']);
  assert.is(await readFile(join((await items.get('task-2'))!, 'x'), 'utf8'), '2');
  assert.is((await readdir(items.root)).filter((n) => n.includes('.tmp-')).length, 0);
});

test('a key lock is exclusive until released', async () => {
  const store = new CacheStore(await mkdtemp(join(tmpdir(), 'mlepipe-lock-')));
  const a = await tryLock(store.lockPath(KEY));
  assert.ok(a);
  assert.is(await tryLock(store.lockPath(KEY)), null);
  assert.is(await store.isLocked(KEY), true);
  await a!.release();
  const b = await tryLock(store.lockPath(KEY));
  assert.ok(b);
  await b!.release();
});

test('staging folders of dead runs are swept unless their key is held; live runs keep theirs', async () => {
  const store = new CacheStore(await mkdtemp(join(tmpdir(), 'mlepipe-sweep-')));
  const other = 'c'.repeat(64);
  const gone = await deadPid();
  const dead = join(store.root, 'tmp', `${KEY}.${gone}.0000`);
  const deadLocked = join(store.root, 'tmp', `${other}.${gone}.0000`);
  const live = await store.staging(KEY);
  for (const d of [dead, deadLocked]) await mkdir(d, { recursive: true });
  const lock = await tryLock(store.lockPath(other));
  try {
    assert.equal(await store.staleStaging(), [dead]);
    // Whoever holds a key may sweep its dead folders even while it is locked (by itself).
    assert.equal(await store.staleStaging(other), [deadLocked]);
    assert.equal(await store.sweepStaging(), [dead]);
    assert.equal((await readdir(join(store.root, 'tmp'))).sort(), [basename(deadLocked), basename(live)].sort());
  } finally {
    await lock!.release();
  }
  const gc = await collectGarbage(store, false);
  assert.equal(gc.other, [join('tmp', basename(deadLocked))]);
  assert.equal(await readdir(join(store.root, 'tmp')), [basename(live)]);
});

/** The pid of a process that has exited. */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' });
  await new Promise((r) => child.once('exit', r));
  return child.pid!;
}

test('entries that did the same work are found by their base key; gc drops the marks of entries it removes', async () => {
  const store = new CacheStore(await mkdtemp(join(tmpdir(), 'mlepipe-store-')));
  const base = 'c'.repeat(64);
  for (const key of ['a'.repeat(64), 'b'.repeat(64)]) {
    const s = await store.staging(key);
    await store.commit(s, fakeManifest({ key, baseKey: base }));
  }
  assert.equal((await store.sameWork(base)).sort(), ['a'.repeat(64), 'b'.repeat(64)]);
  assert.equal(await store.sameWork('d'.repeat(64)), []);
  // Nothing refers to either entry: gc removes both, and their marks with them.
  await collectGarbage(store, false);
  assert.equal(await store.sameWork(base), []);
  assert.equal(await readdir(join(store.root, 'bases')), []);
});

test.run();
