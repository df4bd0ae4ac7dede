import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdir, mkdtemp, readFile, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { listFiles } from '../../core/fs.js';
import { CacheStore } from './store.js';
import { fakeManifest } from '../../test/helpers.js';
import { damageReason } from './verify.js';

const KEY = 'b'.repeat(64);

/** A published entry with out.txt and sub/data.csv, its manifest made the way a run makes it. */
async function entry(opts: { mtimes?: boolean } = {}): Promise<CacheStore> {
  const store = new CacheStore(await mkdtemp(join(tmpdir(), 'mlepipe-verify-')));
  const staged = await store.staging(KEY);
  await writeFile(join(staged, 'out.txt'), 'hello\n');
  await mkdir(join(staged, 'sub'));
  await writeFile(join(staged, 'sub', 'data.csv'), 'a,b\n1,2\n');
  // Whole-second mtimes, so that a test can put one back exactly (utimes takes no nanoseconds).
  for (const f of ['out.txt', 'sub/data.csv']) await utimes(join(staged, f), 1_700_000_000, 1_700_000_000);
  const files = await listFiles(staged, (rel) => rel === 'manifest.json', { mtimes: opts.mtimes ?? true });
  await store.commit(staged, fakeManifest({ key: KEY, files, metrics: { x: 1 } }));
  return store;
}

const reason = async (store: CacheStore, full = false) => {
  const c = await store.check(KEY, full);
  return c.state === 'damaged' ? damageReason(c.problems) : c.state;
};

test('a whole entry checks ok, quickly and fully; a missing one is absent', async () => {
  const store = await entry();
  const c = await store.check(KEY);
  assert.is(c.state, 'ok');
  assert.is(c.state === 'ok' && c.manifest.metrics.x, 1);
  assert.is(await reason(store, true), 'ok');
  assert.is(await reason(new CacheStore(store.root + '-none')), 'absent');
  // Mtimes are recorded only when asked, so keys built from listFiles stay as they were.
  assert.equal(Object.keys((await listFiles(store.entryDir(KEY)))[0]).sort(), ['path', 'sha256', 'size']);
  assert.ok((await store.manifest(KEY))!.files.every((f) => typeof f.mtimeMs === 'number'));
});

test('a deleted, truncated or edited output makes the entry damaged', async () => {
  const store = await entry();
  await rm(join(store.entryDir(KEY), 'sub', 'data.csv'));
  assert.is(await reason(store), 'damaged: sub/data.csv missing');

  const s2 = await entry();
  await writeFile(join(s2.entryDir(KEY), 'out.txt'), 'hel');
  assert.is(await reason(s2), 'damaged: out.txt changed');

  // Same size, new content: the mtime disagrees, so the file is hashed.
  const s3 = await entry();
  await writeFile(join(s3.entryDir(KEY), 'out.txt'), 'HELLO\n');
  await utimes(join(s3.entryDir(KEY), 'out.txt'), new Date(), new Date(Date.now() + 5000));
  assert.is(await reason(s3), 'damaged: out.txt changed');
});

test('a touched but unchanged file is still whole (the hash decides)', async () => {
  const store = await entry();
  await utimes(join(store.entryDir(KEY), 'out.txt'), new Date(), new Date(Date.now() + 5000));
  assert.is(await reason(store), 'ok');
});

test('the quick check trusts matching sizes and mtimes; the full check hashes every file', async () => {
  const store = await entry();
  const file = join(store.entryDir(KEY), 'out.txt');
  const before = await stat(file);
  await writeFile(file, 'HELLO\n');
  await utimes(file, before.atime, before.mtime);
  assert.is(await reason(store), 'ok');
  assert.is(await reason(store, true), 'damaged: out.txt changed');
});

test('the full check also finds files the manifest does not list', async () => {
  const store = await entry();
  await writeFile(join(store.entryDir(KEY), 'sub', 'extra.bin'), 'x');
  assert.is(await reason(store), 'ok');
  assert.is(await reason(store, true), 'damaged: sub/extra.bin not in the manifest');
});

test('an unreadable, missing or foreign manifest makes the entry damaged', async () => {
  const store = await entry();
  const mf = join(store.entryDir(KEY), 'manifest.json');
  const text = await readFile(mf, 'utf8');
  await writeFile(mf, text.slice(0, text.length / 2));
  assert.match(await reason(store), /^damaged: manifest\.json unreadable/);
  await writeFile(
    mf,
    JSON.stringify({ ...JSON.parse(text), files: [{ path: '../../etc/passwd', size: 1, sha256: 'x' }] }),
  );
  assert.match(await reason(store), /^damaged: manifest\.json unreadable/);
  await writeFile(mf, JSON.stringify({ ...JSON.parse(text), key: 'c'.repeat(64) }));
  assert.match(await reason(store), /^damaged: manifest\.json is for another key/);
  await rm(mf);
  assert.is(await reason(store), 'damaged: manifest.json missing');
});

test('manifests written before mtimes were recorded are checked by hash', async () => {
  const store = await entry({ mtimes: false });
  assert.is(await reason(store), 'ok');
  const file = join(store.entryDir(KEY), 'out.txt');
  const before = await stat(file);
  await writeFile(file, 'HELLO\n');
  await utimes(file, before.atime, before.mtime);
  assert.is(await reason(store), 'damaged: out.txt changed');
});

test('several problems are summed up in one line', () => {
  assert.is(damageReason(['a missing']), 'damaged: a missing');
  assert.is(damageReason(['a missing', 'b changed']), 'damaged: a missing, b changed');
  assert.is(
    damageReason(['a missing', 'b changed', 'c changed', 'd changed']),
    'damaged: a missing, b changed, c changed and 1 more',
  );
});

test.run();
