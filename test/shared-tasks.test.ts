// The test files' shared task entries (test/shared-tasks.ts): what one project's run built under a key is
// served, whole, from the cache of another project whose run needs the same key; nodes of other kinds run.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtemp, readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cli, ownTaskNodes, shareTaskNodes, tmpProject } from './helpers.js';

const EXP = `name: s
stages:
  tasks: { uses: generate, with: { seeds: mlebench-tabular, count: 1, samples: [50, 80], seed: 1 } }
  verified: { uses: filter, needs: [tasks], with: { val: 0 } }
  count: { uses: shell, needs: [verified], with: { run: "echo counted" } }
`;

test('a second project takes the first one’s generated and filtered tasks from the store, intact, and runs its shell node', async () => {
  // Its own store, whatever the runner gave: the test counts what is in it.
  const store = await mkdtemp(join(tmpdir(), 'shared-tasks-'));
  process.env.MLEPIPE_TEST_SHARED_TASKS = store;
  shareTaskNodes();
  const first = await tmpProject({ 'e.yaml': EXP });
  const a = await cli(['run', 'e.yaml'], { cwd: first });
  assert.is(a.exitCode, 0, a.stderr);
  assert.match(a.stderr, /3 ran, 0 cached/);
  // The generate and filter entries were published, each under its kind; the shell node's was not.
  assert.equal((await readdir(store)).sort(), ['filter', 'generate']);
  for (const kind of ['filter', 'generate']) assert.is((await readdir(join(store, kind))).length, 1);

  const second = await tmpProject({ 'e.yaml': EXP });
  const b = await cli(['run', 'e.yaml'], { cwd: second });
  assert.is(b.exitCode, 0, b.stderr);
  assert.match(b.stderr, /1 ran, 2 cached/);
  // The copied entries pass the cache's full check (every file hashed against its manifest).
  const verify = await cli(['cache', 'verify'], { cwd: second });
  assert.is(verify.exitCode, 0, verify.stdout + verify.stderr);

  // A project left out of the sharing builds its tasks itself.
  const third = await tmpProject({ 'e.yaml': EXP });
  ownTaskNodes(third);
  const c = await cli(['run', 'e.yaml'], { cwd: third });
  assert.is(c.exitCode, 0, c.stderr);
  assert.match(c.stderr, /3 ran, 0 cached/);
});

test('a project takes from the store only the task entries its own run needs, whatever other files put there', async () => {
  const store = await mkdtemp(join(tmpdir(), 'shared-tasks-'));
  process.env.MLEPIPE_TEST_SHARED_TASKS = store;
  shareTaskNodes();
  const first = await tmpProject({ 'e.yaml': EXP });
  assert.is((await cli(['run', 'e.yaml'], { cwd: first })).exitCode, 0);
  // Another seed: other keys for both task nodes. Its cache holds its own three entries and none of the store's.
  const other = await tmpProject({ 'e.yaml': EXP.replace('seed: 1', 'seed: 2') });
  const r = await cli(['run', 'e.yaml'], { cwd: other });
  assert.is(r.exitCode, 0, r.stderr);
  assert.match(r.stderr, /3 ran, 0 cached/);
  assert.is((await readdir(join(other, '.mlepipe', 'nodes'))).filter((n) => !n.startsWith('.')).length, 3);
  // The same experiment with its seed set by -S takes both entries the first project built.
  const overridden = await tmpProject({ 'e.yaml': EXP.replace('seed: 1', 'seed: 3') });
  const s = await cli(['run', 'e.yaml', '-S', 'stages.tasks.with.seed=1'], { cwd: overridden });
  assert.is(s.exitCode, 0, s.stderr);
  assert.match(s.stderr, /1 ran, 2 cached/);
});

test.run();
