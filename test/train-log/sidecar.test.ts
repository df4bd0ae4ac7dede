// The training-metrics sidecar (stages/train-log.ts, python/mlepipe_logger.py)
// run for real in .venv/logger: the TensorBoard event files it writes read
// back with TensorBoard's own EventAccumulator, an offline W&B run read back
// from its .wandb file, and what a node does when the logger cannot start.
import { existsSync } from 'node:fs';
import { mkdtemp, readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { EnvError } from '../../core/errors.js';
import type { Tracker } from '../../stages/contract.js';
import { openTrainLog, TENSORBOARD_DIR } from '../../stages/shared/train-log.js';
import { readLogs, readRuns, readScalars } from './read.js';

async function fakeNode(trackers: Tracker[] = ['tensorboard']) {
  const outDir = await mkdtemp(join(tmpdir(), 'train-log-'));
  const lines: string[] = [];
  const ctx = {
    node: { id: 'rl@lr=0.1', name: 'rl', key: 'k', variant: {} },
    outDir,
    log: (l: string) => void lines.push(l),
    tracking: { logger: trackers, experiment: 'tb-exp' },
  };
  return { ctx, outDir, lines };
}

const ROWS = [
  { step: 1, reward_mean: 0.25, valid_rate: 0.5, entropy: null, lr: 0.001 },
  { step: 2, reward_mean: 0.5, valid_rate: 0.75, entropy: 1.5, lr: 0.001 },
  { step: 3, reward_mean: 0.625, valid_rate: 1, entropy: 1.25, lr: 0.0005, val_reward: 0.4 },
];

test('each row becomes TensorBoard scalars named as in metrics.jsonl, at its step; nulls are left out', async () => {
  const { ctx, outDir, lines } = await fakeNode();
  const log = await openTrainLog(ctx);
  for (const r of ROWS) log.write(r);
  await log.close();
  assert.match(lines.join('\n'), `TensorBoard files in ${join(outDir, TENSORBOARD_DIR)}`);
  const files = await readdir(join(outDir, TENSORBOARD_DIR));
  assert.ok(
    files.some((f) => f.startsWith('events.out.tfevents.')),
    files.join(', '),
  );
  const scalars = await readScalars(join(outDir, TENSORBOARD_DIR));
  assert.equal(Object.keys(scalars).sort(), ['entropy', 'lr', 'reward_mean', 'val_reward', 'valid_rate']);
  assert.equal(scalars.reward_mean, [
    [1, 0.25],
    [2, 0.5],
    [3, 0.625],
  ]);
  assert.equal(scalars.entropy, [
    [2, 1.5],
    [3, 1.25],
  ]);
  assert.equal(scalars.val_reward, [[3, 0.4000000059604645]]);
  // The event files say which run they are, wherever they are copied.
  const runs = await readRuns(outDir);
  assert.equal(Object.values(runs)[0]?.texts, { 'mlepipe/run/text_summary': 'tb-exp/rl@lr=0.1' });
});

test('logger: [wandb] with WANDB_MODE=offline: an offline run under WANDB_DIR holding every row, named after the experiment and node', async () => {
  const { ctx, outDir } = await fakeNode(['tensorboard', 'wandb']);
  const wandbDir = await mkdtemp(join(tmpdir(), 'train-log-wandb-'));
  const saved = { ...process.env };
  // No network, no account: offline mode, its files in a folder of the test's own.
  Object.assign(process.env, {
    WANDB_MODE: 'offline',
    WANDB_DIR: wandbDir,
    WANDB_SILENT: 'true',
    WANDB_CONFIG_DIR: join(wandbDir, 'config'),
    WANDB_CACHE_DIR: join(wandbDir, 'cache'),
  });
  delete process.env.WANDB_PROJECT;
  try {
    const log = await openTrainLog(ctx, { config: { lr: 0.001, group_size: 4 } });
    for (const r of ROWS) log.write(r);
    await log.close();
  } finally {
    process.env = saved;
  }
  const runs = (await readdir(join(wandbDir, 'wandb'))).filter((d) => d.startsWith('offline-run-'));
  assert.is(runs.length, 1, runs.join(', '));
  const file = (await readdir(join(wandbDir, 'wandb', runs[0]))).find((f) => f.endsWith('.wandb'));
  assert.ok(file, `no .wandb file in ${runs[0]}`);
  const run = (await readLogs('wandb', join(wandbDir, 'wandb', runs[0], file))) as {
    history: Array<Record<string, number>>;
    config: Record<string, unknown>;
    run: Record<string, string>;
  };
  assert.equal(run.run, { project: 'tb-exp', display_name: 'tb-exp/rl@lr=0.1', run_group: 'rl' });
  assert.is(run.config.lr, 0.001);
  assert.is(run.config.group_size, 4);
  assert.equal(
    run.history.map((h) => [h._step, h.reward_mean, h.valid_rate, h.entropy ?? null]),
    [
      [1, 0.25, 0.5, null],
      [2, 0.5, 0.75, 1.5],
      [3, 0.625, 1, 1.25],
    ],
  );
  assert.is(run.history[2].val_reward, 0.4);
  // TensorBoard's files are written as well.
  assert.ok((await readdir(join(outDir, TENSORBOARD_DIR))).some((f) => f.startsWith('events.out.tfevents.')));
});

test('a logger that cannot start: one line and training goes on; with wandb asked for, an error before training', async () => {
  const missing = join(tmpdir(), 'no-such-python', 'bin', 'python');
  const plain = await fakeNode();
  const log = await openTrainLog(plain.ctx, { python: missing });
  log.write(ROWS[0]);
  await log.close();
  assert.equal(
    plain.lines.filter((l) => l.startsWith('TensorBoard files not written: ')),
    plain.lines,
  );
  assert.is(plain.lines.length, 1);
  assert.match(plain.lines[0], missing);
  assert.not.ok(existsSync(join(plain.outDir, TENSORBOARD_DIR)));

  const asked = await fakeNode(['tensorboard', 'wandb']);
  try {
    await openTrainLog(asked.ctx, { python: missing });
    assert.unreachable('opened without its interpreter');
  } catch (err) {
    assert.instance(err, EnvError);
    assert.match((err as Error).message, 'logger: [wandb] in the project settings, but the logger');
  }
});

test.run();
