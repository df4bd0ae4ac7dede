// Crashes and contention: kill -9 mid-run, Ctrl-C, two runs at once. The
// cache must stay consistent and no finished node may run twice.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execa } from 'execa';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { exists } from '../../core/fs.js';
import { cli, cliStart, tmpProject, waitFor } from '../helpers.js';

const count = async (dir: string, word: string) =>
  (await readFile(join(dir, 'runs.log'), 'utf8').catch(() => '')).split('\n').filter((l) => l === word).length;

const SLOW = (marker: string, secs: number) => `name: slow
stages:
  a: { uses: shell, with: { run: "echo a >> runs.log" } }
  b: { uses: shell, needs: [a], with: { run: "echo b >> runs.log; touch ${marker}; sleep ${secs}; echo b-done >> runs.log" } }
  c: { uses: shell, needs: [b], with: { run: "echo c >> runs.log" } }
`;

test('kill -9 in the middle: the rerun keeps finished nodes and finishes the rest', async () => {
  const dir = await tmpProject({ 'e.yaml': SLOW('b.started', 2) });
  const first = cliStart(['run', 'e.yaml'], { cwd: dir });
  await waitFor(() => exists(join(dir, 'b.started')), 30_000, 'b to start');
  process.kill(first.pid!, 'SIGKILL');
  await first;
  const rerun = await cli(['run', 'e.yaml'], { cwd: dir });
  assert.is(rerun.exitCode, 0, rerun.stderr);
  assert.match(rerun.stderr, /· a\s+cached/);
  assert.match(rerun.stderr, '✔ c');
  assert.is(await count(dir, 'a'), 1, 'a ran once');
  assert.is(await count(dir, 'c'), 1, 'c ran once');
  const status = await cli(['status', 'e.yaml'], { cwd: dir });
  assert.is(status.exitCode, 0, status.stdout);
  // Every published entry is whole.
  for (const key of await readdir(join(dir, '.mlepipe', 'nodes'))) {
    assert.ok(await exists(join(dir, '.mlepipe', 'nodes', key, 'manifest.json')), key);
  }
});

test('Ctrl-C stops the node and every process it started, and leaves no entry or lock behind', async () => {
  const tag = `${300 + Math.floor(Math.random() * 1000)}.25`;
  const exp = `name: int
stages:
  a: { uses: shell, with: { run: "echo a >> runs.log" } }
  b: { uses: shell, needs: [a], with: { run: "(sleep ${tag} &); nohup sleep ${tag} >/dev/null 2>&1 & touch b.started; sleep ${tag}; echo b-done >> runs.log" } }
`;
  const dir = await tmpProject({ 'e.yaml': exp });
  const run = cliStart(['run', 'e.yaml'], { cwd: dir });
  await waitFor(() => exists(join(dir, 'b.started')), 30_000, 'b to start');
  process.kill(run.pid!, 'SIGINT');
  const r = await run;
  assert.is(r.exitCode, 130, String(r.stderr));
  assert.match(String(r.stderr), /- b\s+skipped: interrupted/);
  // The KILL that follows TERM: no process survives it.
  const left = async () => String((await execa('pgrep', ['-f', `sleep ${tag}`], { reject: false })).stdout).trim();
  await waitFor(async () => (await left()) === '', 10_000, 'every process of b to die');
  // Stopped, not waited for: b's sleep never ended.
  assert.equal((await readFile(join(dir, 'runs.log'), 'utf8')).trim().split('\n'), ['a']);
  assert.equal(await readdir(join(dir, '.mlepipe', 'tmp')).catch(() => []), []);
  const plan = JSON.parse((await cli(['plan', 'e.yaml', '--json'], { cwd: dir })).stdout);
  assert.equal(
    plan.nodes.map((n: { action: string }) => n.action),
    ['cached', 'run'],
  );
  assert.equal(await readdir(join(dir, '.mlepipe', 'locks')).then((l) => l.filter((n) => n.endsWith('.lock'))), []);
});

test('two concurrent runs of the same experiment run each node once', async () => {
  const exp = `name: twice
stages:
  a: { uses: shell, with: { run: "echo a >> runs.log; sleep 1" } }
  b: { uses: shell, needs: [a], with: { run: "echo b >> runs.log; sleep 1" } }
  c: { uses: shell, needs: [a], with: { run: "echo c >> runs.log; sleep 1" } }
  d: { uses: shell, needs: [b, c], with: { run: "echo d >> runs.log" } }
`;
  const dir = await tmpProject({ 'e.yaml': exp });
  const [x, y] = await Promise.all([cli(['run', 'e.yaml'], { cwd: dir }), cli(['run', 'e.yaml'], { cwd: dir })]);
  assert.is(x.exitCode, 0, x.stderr);
  assert.is(y.exitCode, 0, y.stderr);
  for (const n of ['a', 'b', 'c', 'd']) assert.is(await count(dir, n), 1, `${n} ran once`);
  assert.match(x.stderr + y.stderr, 'cached (finished by another run)');
  const lock = JSON.parse(await readFile(join(dir, 'e.lock.json'), 'utf8'));
  assert.equal(Object.keys(lock.nodes), ['a', 'b', 'c', 'd']);
  assert.is((await cli(['status', 'e.yaml'], { cwd: dir })).exitCode, 0);
});

test.run();
