// A verl job's run is named by the node that submits it, and its TensorBoard files are reached through the node's
// tensorboard/ while it trains (where `<cache>/tensorboard/EXPERIMENT/NODE` points) and copied there once it ends.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync, lstatSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { collectTensorboard, jobOverrides, verlRunNames, watchTensorboard } from './verl-job.js';

const ctx = (experiment: string | undefined, id: string) => ({
  node: { id, name: 'rl', key: 'k', variant: undefined },
  tracking: experiment === undefined ? undefined : { logger: [], experiment },
});

test("the job's overrides name the submitting node's run, replacing the names the export was written with", () => {
  const saved = process.env.WANDB_PROJECT;
  delete process.env.WANDB_PROJECT;
  try {
    const written = ['trainer.nnodes=1', "trainer.project_name='other'", "trainer.experiment_name='other/rl@lr=1'"];
    const o = jobOverrides(ctx('learn', 'rl@lr=1e-6,seed=2') as never, written);
    assert.equal(o, [
      'trainer.nnodes=1',
      "trainer.project_name='learn'",
      "trainer.experiment_name='learn/rl@lr=1e-6,seed=2'",
    ]);
    process.env.WANDB_PROJECT = 'shared';
    assert.equal(verlRunNames(ctx('learn', 'rl') as never), { project: 'shared', name: 'learn/rl' });
  } finally {
    if (saved === undefined) delete process.env.WANDB_PROJECT;
    else process.env.WANDB_PROJECT = saved;
  }
});

test("the node's tensorboard/ reaches verl's files while the job runs, and holds a copy once it ends", async () => {
  const dir = await mkdtemp(join(tmpdir(), 'verl-tb-'));
  const results = join(dir, 'results');
  const out = join(dir, 'out');
  await mkdir(results);
  await mkdir(out);
  await watchTensorboard(results, out);
  // verl makes TENSORBOARD_DIR when its tracker opens, after the link is there.
  await mkdir(join(results, 'tensorboard'));
  await writeFile(join(results, 'tensorboard', 'events.out.tfevents.1'), 'e1');
  assert.is(await readFile(join(out, 'tensorboard', 'events.out.tfevents.1'), 'utf8'), 'e1');
  await collectTensorboard(results, out);
  assert.ok(lstatSync(join(out, 'tensorboard')).isDirectory(), 'a folder of its own, not a link');
  assert.is(await readFile(join(out, 'tensorboard', 'events.out.tfevents.1'), 'utf8'), 'e1');
  assert.ok(existsSync(join(results, 'tensorboard', 'events.out.tfevents.1')), "the job's files stay");
});

test.run();
