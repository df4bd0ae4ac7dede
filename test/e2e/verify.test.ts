// Damaged cache entries through the built CLI: plan and status call them
// stale with the reason, run rebuilds them, `cache verify` finds and repairs them.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { cli, tmpProject } from '../helpers.js';

const EXP = `name: v
stages:
  a: { uses: shell, with: { run: "echo a >> runs.log; mkdir -p $MLEPIPE_OUT/outputs; seq 1 5 > $MLEPIPE_OUT/outputs/x.csv" } }
  b: { uses: shell, needs: [a], with: { run: "echo b >> runs.log; wc -l < $MLEPIPE_IN_A/outputs/x.csv > $MLEPIPE_OUT/n.txt" } }
`;

/** A project that has run once; `entry` is node a's cache folder. */
async function ran(): Promise<{ dir: string; key: string; entry: string }> {
  const dir = await tmpProject({ 'e.yaml': EXP });
  const r = await cli(['run', 'e.yaml'], { cwd: dir });
  assert.is(r.exitCode, 0, r.stderr);
  const key = JSON.parse(await readFile(join(dir, 'e.lock.json'), 'utf8')).nodes.a.key as string;
  return { dir, key, entry: join(dir, '.mlepipe', 'nodes', key) };
}

const runs = async (dir: string) => (await readFile(join(dir, 'runs.log'), 'utf8')).trim().split('\n');
const actions = async (dir: string) =>
  JSON.parse((await cli(['plan', 'e.yaml', '--json'], { cwd: dir })).stdout).nodes.map(
    (n: { id: string; action: string; reason: string }) => `${n.id} ${n.action} ${n.reason}`,
  );

test('an edited output: plan and status say which file, run rebuilds the entry, verify agrees', async () => {
  const { dir, key, entry } = await ran();
  await writeFile(join(entry, 'outputs', 'x.csv'), 'edited\n');
  assert.equal(await actions(dir), ['a run damaged: outputs/x.csv changed', 'b cached cached']);
  const status = await cli(['status', 'e.yaml'], { cwd: dir });
  assert.is(status.exitCode, 1);
  assert.match(status.stdout, 'a: damaged: outputs/x.csv changed');
  const verify = await cli(['cache', 'verify'], { cwd: dir });
  assert.is(verify.exitCode, 1, verify.stdout);
  assert.match(verify.stdout, `damaged ${key.slice(0, 12)}  a  outputs/x.csv changed`);
  assert.match(verify.stdout, '--repair would remove 1 damaged entry');

  const rerun = await cli(['run', 'e.yaml'], { cwd: dir });
  assert.is(rerun.exitCode, 0, rerun.stderr);
  assert.match(rerun.stderr, 'damaged: outputs/x.csv changed; rebuilding it');
  assert.equal(await runs(dir), ['a', 'b', 'a']);
  assert.is(await readFile(join(entry, 'outputs', 'x.csv'), 'utf8'), '1\n2\n3\n4\n5\n');
  assert.is((await cli(['cache', 'verify'], { cwd: dir })).exitCode, 0);
  assert.is((await cli(['status', 'e.yaml'], { cwd: dir })).exitCode, 0);
  assert.equal(await readdir(join(dir, '.mlepipe', 'tmp')), []);
});

test('a truncated manifest is damaged, never cached, and rebuilt', async () => {
  const { dir, entry } = await ran();
  const text = await readFile(join(entry, 'manifest.json'), 'utf8');
  await writeFile(join(entry, 'manifest.json'), text.slice(0, 40));
  const [a] = await actions(dir);
  assert.match(a, /^a run damaged: manifest\.json unreadable/);
  const out = await cli(['outputs', 'e.yaml', 'a'], { cwd: dir });
  assert.is(out.exitCode, 1);
  assert.match(out.stderr, 'a: cache entry damaged: manifest.json unreadable');
  const rerun = await cli(['run', 'e.yaml'], { cwd: dir });
  assert.is(rerun.exitCode, 0, rerun.stderr);
  assert.equal(await runs(dir), ['a', 'b', 'a']);
  assert.equal(JSON.parse(await readFile(join(entry, 'manifest.json'), 'utf8')).node, 'a');
});

test('cache verify names the entries it is given, reports JSON, and --repair removes the damaged', async () => {
  const { dir, key, entry } = await ran();
  await rm(join(entry, 'outputs', 'x.csv'));
  await writeFile(join(entry, 'stray.txt'), 'x');
  const one = await cli(['cache', 'verify', key.slice(0, 10), '--json'], { cwd: dir });
  assert.is(one.exitCode, 1);
  const j = JSON.parse(one.stdout);
  assert.is(j.checked, 1);
  assert.equal(j.entries[0].problems, ['outputs/x.csv missing', 'stray.txt not in the manifest']);
  const unknown = await cli(['cache', 'verify', 'ffff0000'], { cwd: dir });
  assert.is(unknown.exitCode, 2);
  assert.match(unknown.stderr, 'ffff0000: no such cache entry');

  const repair = await cli(['cache', 'verify', '--repair'], { cwd: dir });
  assert.is(repair.exitCode, 0, repair.stdout);
  assert.match(repair.stdout, `removed ${key.slice(0, 12)}  a`);
  assert.equal(await actions(dir), ['a run no entry (removed from the cache)', 'b cached cached']);
  const all = JSON.parse((await cli(['cache', 'verify', '--json'], { cwd: dir })).stdout);
  assert.equal([all.checked, all.damaged], [1, 0]);
});

test.run();
