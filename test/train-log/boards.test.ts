// Training curves by name: after a grpo stage ablated over lr, `tensorboard --logdir <cache>/tensorboard`
// lists one run per arm, named EXPERIMENT/NODE@variant, each a link into the arm's cache entry; the event
// files name their run too; a cached rerun keeps the links, and `cache gc` drops those whose entry went.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readdir, readlink, rm } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { boardPath, dropBoard, linkBoard, settleBoard, sweepBoards } from '../../pipelines/cache/boards.js';
import { cli, nodeKey, sharedCacheSettings, shareTaskNodes, tmpProject } from '../helpers.js';
import { readRuns } from './read.js';

shareTaskNodes();

const EXP = `name: boards
stages:
  tasks: { uses: generate, with: { seeds: mlebench-tabular, count: 3, samples: [60, 100], seed: 4 } }
  verified: { uses: filter, needs: [tasks], with: { val: 0 } }
  rl: { uses: grpo, needs: [verified], with: { split: all, steps: 2, batch_size: 1, group_size: 2, max_turns: 2, lr: 0.1, seed: 0 } }
  lrs: { uses: ablate, target: rl, matrix: { lr: [0.1, 0.3] } }
`;

test('an ablated grpo stage: one TensorBoard run per arm, named experiment/node@variant', async () => {
  const { cache, settings } = await sharedCacheSettings();
  const dir = await tmpProject({ 'e.yaml': EXP }, settings);
  const r = await cli(['run', 'e.yaml'], { cwd: dir });
  assert.is(r.exitCode, 0, r.stderr);
  const boards = join(cache, 'tensorboard');
  const runs = await readRuns(boards);
  assert.equal(Object.keys(runs).sort(), ['boards/rl@lr=0.1', 'boards/rl@lr=0.3']);
  for (const [name, run] of Object.entries(runs)) {
    assert.ok(run.scalars.includes('reward_mean'), `${name}: ${run.scalars.join(', ')}`);
    assert.equal(run.texts, { 'mlepipe/run/text_summary': name });
    // A link into the arm's own entry, not a copy.
    const at = join(boards, name);
    const key = await nodeKey(dir, name.slice('boards/'.length));
    assert.is(resolve(dirname(at), await readlink(at)), join(cache, 'nodes', key, 'tensorboard'));
  }
  // The tasks, the filter and the ablation train nothing: no link for them, once they are published.
  assert.equal((await readdir(join(boards, 'boards'))).sort(), ['rl@lr=0.1', 'rl@lr=0.3']);

  // A cached rerun puts back a link that went.
  await rm(join(boards, 'boards', 'rl@lr=0.3'));
  const again = await cli(['run', 'e.yaml'], { cwd: dir });
  assert.is(again.exitCode, 0, again.stderr);
  assert.equal(Object.keys(await readRuns(boards)).sort(), ['boards/rl@lr=0.1', 'boards/rl@lr=0.3']);
});

test('links: replaced in place, dropped only by the folder they point into, swept once their folder is gone', async () => {
  const root = await tmpProject({ 'nodes/a/tensorboard/x': '', 'nodes/b/tensorboard/x': '', 'nodes/c/y': '' });
  const at = boardPath(root, 'exp', 'rl@path=/models/m');
  assert.is(at, join(root, 'tensorboard', 'exp', 'rl@path=%2Fmodels%2Fm'));
  await linkBoard(root, 'exp', 'rl@path=/models/m', join(root, 'nodes', 'a'));
  await settleBoard(root, 'exp', 'rl@path=/models/m', join(root, 'nodes', 'b'));
  assert.is(resolve(dirname(at), await readlink(at)), join(root, 'nodes', 'b', 'tensorboard'));
  // An entry without curves has no link; a link elsewhere is left as it is.
  await settleBoard(root, 'exp', 'rl@path=/models/m', join(root, 'nodes', 'c'));
  assert.ok(await readlink(at));
  await settleBoard(root, 'exp', 'other', join(root, 'nodes', 'c'));
  assert.is(await readlink(boardPath(root, 'exp', 'other')).catch(() => 'none'), 'none');
  // A link into a folder that is there but has no curves yet (a node starting) is kept by the sweep.
  await linkBoard(root, 'exp', 'starting', join(root, 'nodes', 'c'));
  await rm(join(root, 'nodes', 'b'), { recursive: true });
  assert.equal(await sweepBoards(root, true), ['tensorboard/exp/rl@path=%2Fmodels%2Fm']);
  assert.ok(await readlink(at), 'a dry run removes nothing');
  assert.equal(await sweepBoards(root, false), ['tensorboard/exp/rl@path=%2Fmodels%2Fm']);
  assert.is(await readlink(at).catch(() => 'gone'), 'gone');
  assert.ok(await readlink(boardPath(root, 'exp', 'starting')));
  // Once that folder goes (a staging folder published), dropping the link for its entry removes it.
  await rm(join(root, 'nodes', 'c'), { recursive: true });
  await dropBoard(root, 'exp', 'starting', join(root, 'nodes', 'elsewhere'));
  assert.is(await readlink(boardPath(root, 'exp', 'starting')).catch(() => 'gone'), 'gone');
});

test.run();
