// The sft stage through the built CLI on a tiny random-weight model: 26
// recorded trajectories (4 unsuccessful, 2 near-copies) are filtered,
// deduplicated and split; training lowers the validation loss (and logs it to
// TensorBoard and an offline W&B run); the dataset is
// conversational JSONL; the checkpoint serves completions through a
// `checkpoint:` model; a chat JSONL line that is not a conversation is
// refused at FILE:LINE before anything runs.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import OpenAI from 'openai';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { InputNode } from '../../stages/contract.js';
import { stageContext } from '../stage-context.js';
import { resolveModel } from '../../core/models.js';
import { serveModel } from '../../stages/shared/worker.js';
import { cli, tmpProject, readJsonl } from '../helpers.js';
import { readLogs, readScalars } from '../train-log/read.js';

// Words the tiny worker's tokenizer was trained on (gpu/worker/mlepipe_worker/__main__.py).
const S = ['the model', 'the agent', 'a baseline', 'the grader', 'our solution'];
const V = ['trains on', 'reads', 'predicts', 'scores', 'submits'];
const O = ['the csv', 'twelve features', 'the labels', 'the validation split', 'submission.csv'];

function trajectory(i: number, o: { success?: number; improvement?: number; reply?: string } = {}): string {
  const reply =
    o.reply ??
    `${S[i % 5]} ${V[Math.floor(i / 5) % 5]} ${O[(i * 2) % 5]}. ${S[(i + 2) % 5]} ${V[(i + 1) % 5]} ${O[Math.floor(i / 5) % 5]}.`;
  return JSON.stringify({
    task_id: `task${i}`,
    messages: [
      { role: 'system', content: 'Hello! How can I help?' },
      { role: 'user', content: `the grader reads the csv. task ${i}` },
      { role: 'assistant', content: reply },
      { role: 'user', content: 'accuracy: 0.81 rmse: 1.25' },
      { role: 'assistant', content: `${S[(i + 3) % 5]} submits submission.csv.` },
    ],
    reward: o.success === 0 ? 0 : 1,
    variables: { success: o.success ?? 1, valid: 1, improvement: o.improvement ?? 1 },
  });
}

const lines = [
  ...Array.from({ length: 20 }, (_, i) => trajectory(i)),
  // Unsuccessful runs, dropped by the filter.
  ...[20, 21, 22, 23].map((i) => trajectory(i, { success: 0 })),
  // Copies of two runs with less improvement: the originals are kept.
  trajectory(3, { improvement: 0.5 }).replace('task3', 'task3b'),
  trajectory(7, { improvement: 0.2 }).replace('task7', 'task7b'),
];

const RECORDED = lines.join('\n') + '\n';
/** The words of the training replies. */
const TRAINING_WORDS = new Set([...S, ...V, ...O].join(' ').split(' ').concat(['.', 'submission.csv.']));
/** Project settings that log training to W&B as well. */
const WANDB_SETTINGS = 'cache: .mlepipe\nlogger: [wandb]\n';

const EXPERIMENT = `name: tune
models:
  base: { provider: worker, tiny: 0, model: tiny, lora_rank: 0 }
stages:
  runs: { uses: shell, with: { run: "cp recorded.jsonl trajectories.jsonl", deps: [recorded.jsonl], outs: [trajectories.jsonl] } }
  tune:
    uses: sft
    needs: [runs]
    with: { model: base, filter: { success: true }, val_fraction: 0.2, seed: 3, epochs: 4, lr: 0.003, batch_size: 4, warmup: 0.1, max_length: 256 }
tables:
  curve: { from: tune, rows: curve, columns: [epoch, train_loss, val_loss] }
`;

const jsonl = readJsonl;

/** W&B offline: no account, no network; without WANDB_DIR the run's files go into the node's output. */
const offlineWandb = (dir: string) => ({
  WANDB_MODE: 'offline',
  WANDB_SILENT: 'true',
  WANDB_CONFIG_DIR: join(dir, '.wandb-config'),
  WANDB_CACHE_DIR: join(dir, '.wandb-cache'),
});

/** Prints the curve's losses, for a look at a run that fails. */
function logCurve(curve: Array<Record<string, number>>): void {
  console.log(
    `val loss ${curve[0].val_loss} → ${curve[4].val_loss}; train loss ${curve
      .slice(1)
      .map((c) => c.train_loss)
      .join(', ')}`,
  );
}

/** An offline W&B run's history, config and names, from the .wandb file in its folder. */
async function readWandbRun(runDir: string) {
  const wandbFile = (await readdir(runDir)).find((f) => f.endsWith('.wandb'))!;
  return (await readLogs('wandb', join(runDir, wandbFile))) as {
    history: Array<Record<string, number>>;
    config: Record<string, unknown>;
    run: Record<string, string>;
  };
}

/** Serves the tuned checkpoint in `out` as the sft node's input, for a later stage's model `mine`. */
function serveTuned(dir: string, out: string) {
  const input = { name: 'tune', id: 'tune', key: 'k', dir: out, metrics: {}, variant: {} } as InputNode;
  const ctx = stageContext(undefined, {
    experimentDir: dir,
    inputs: [input],
    outDir: join(dir, 'scratch'),
    models: { mine: resolveModel({ provider: 'worker', checkpoint: 'tune', model: 'mine' }) },
  });
  return serveModel(ctx, 'mine');
}

/** One greedy completion of a training prompt from the served model. */
function askTask1(spec: { base_url?: string; model: string }) {
  const client = new OpenAI({ baseURL: spec.base_url, apiKey: 'none' });
  return client.chat.completions.create({
    model: spec.model,
    messages: [{ role: 'user', content: 'the grader reads the csv. task 1' }],
    max_tokens: 12,
    temperature: 0,
  });
}

test('sft on 20 trajectories lowers the validation loss, logs its curve to TensorBoard and an offline W&B run, and its checkpoint serves completions', async () => {
  const dir = await tmpProject({ 'e.yaml': EXPERIMENT, 'recorded.jsonl': RECORDED }, WANDB_SETTINGS);
  const r = await cli(['run', 'e.yaml'], { cwd: dir, env: offlineWandb(dir) });
  assert.is(r.exitCode, 0, r.stderr + r.stdout);
  assert.match(r.stdout, /curve\nepoch\s+train_loss\s+val_loss\n0\s/);
  const out = (await cli(['outputs', 'e.yaml', 'tune'], { cwd: dir })).stdout.trim();
  // The node's key is stable: planning again finds everything cached.
  assert.match((await cli(['plan', 'e.yaml'], { cwd: dir })).stdout, /2 nodes, 0 to run, 2 cached/);

  const funnel = JSON.parse(await readFile(join(out, 'dataset', 'funnel.json'), 'utf8'));
  assert.equal(funnel.filtered_out, { success: 4, min_reward: 0, valid_submission: 0 });
  assert.is(funnel.duplicates, 2);
  const [train, val] = await Promise.all(['train', 'val'].map((n) => jsonl(join(out, 'dataset', `${n}.jsonl`))));
  assert.is(train.length + val.length, 20);
  assert.is(val.length, 4);
  // Conversational JSONL as TRL reads it: messages and nothing else.
  for (const row of [...train, ...val]) assert.equal(Object.keys(row), ['messages']);
  const users = [...train, ...val].map((row) => row.messages[1].content as string);
  assert.not.ok(
    users.some((u) => u.endsWith('task3b') || u.endsWith('task7b')),
    'the better copy is kept',
  );

  const curve = await jsonl(join(out, 'metrics.jsonl'));
  assert.is(curve.length, 5);
  const before = curve[0].val_loss as number;
  const after = curve[4].val_loss as number;
  logCurve(curve);
  assert.ok(after < 0.8 * before, `val loss ${before} → ${after}`);
  assert.ok(curve[4].train_loss < curve[1].train_loss, 'train loss falls across epochs');
  assert.is(curve[4].step, 16);
  assert.ok(curve.slice(1).every((c) => c.tokens > 0));
  // The same curve in TensorBoard, at the optimiser steps; epoch 0 (before training) has no train loss.
  const scalars = await readScalars(join(out, 'tensorboard'));
  assert.equal(
    scalars.val_loss.map(([step]) => step),
    curve.map((c) => c.step),
  );
  scalars.val_loss.forEach(([, v], i) =>
    assert.ok(Math.abs(v - curve[i].val_loss) < 1e-5, `val_loss ${v} vs ${curve[i].val_loss}`),
  );
  assert.equal(
    scalars.train_loss.map(([step]) => step),
    [4, 8, 12, 16],
  );
  // And as a W&B run named EXPERIMENT/NODE (here both are tune), one history row a metrics.jsonl row.
  const runs = (await readdir(join(out, 'wandb'))).filter((d) => d.startsWith('offline-run-'));
  assert.is(runs.length, 1, runs.join(', '));
  const run = await readWandbRun(join(out, 'wandb', runs[0]));
  assert.equal(run.run, { project: 'tune', display_name: 'tune/tune', run_group: 'tune' });
  assert.is(run.config.epochs, 4);
  assert.equal(
    run.history.map((h) => [h._step, h.val_loss]),
    curve.map((c) => [c.step, c.val_loss]),
  );

  // The checkpoint holds the weights (no optimiser state) and serves.
  const files = await readdir(join(out, 'checkpoint'));
  assert.ok(files.includes('mlepipe-worker.json') && files.includes('model'), files.join(', '));
  assert.not.ok(files.includes('optimizer.pt'));
  assert.not.ok(
    (await readdir(out)).some((f) => f.startsWith('.tmp')),
    'nothing half-written is left',
  );
  const served = await serveTuned(dir, out);
  try {
    const c = await askTask1(served.spec);
    assert.ok(c.choices[0].message.content, 'a reply');
    // The fine-tuned weights, not the random start: the reply is in the training replies' words.
    const words = TRAINING_WORDS;
    const reply = c.choices[0].message.content!.split(/\s+/).filter(Boolean);
    assert.ok(
      reply.filter((w) => words.has(w.replace(/\.$/, '')) || words.has(w)).length >= reply.length / 2,
      `reply: ${c.choices[0].message.content}`,
    );
  } finally {
    await served.stop();
  }
});

test('a plan that cannot fit the GPU is refused as the worker starts: it plans for max_length and the micro-batch, and nothing is cached', async () => {
  const dir = await tmpProject({
    'e.yaml': EXPERIMENT.replace('max_length: 256 }', 'max_length: 256, micro_batch_size: 2 }'),
    'recorded.jsonl': lines.join('\n') + '\n',
  });
  // A GPU of 1 MiB: the tiny model's training state alone is more.
  const r = await cli(['run', 'e.yaml'], { cwd: dir, env: { MLEPIPE_WORKER_DEVICE_MEMORY_GIB: String(1 / 1024) } });
  assert.is(r.exitCode, 1, r.stderr);
  assert.match(
    r.stderr,
    /full fine-tuning of 0\.\d+B parameters needs [\d.]+ GiB \(weights [\d.]+, .*activations [\d.]+, output head [\d.]+ GiB\)/,
  );
  assert.match(r.stderr, /\(planned: 2 × 256 tokens a forward pass, gradient checkpointing on\)/);
  assert.match((await cli(['plan', 'e.yaml'], { cwd: dir })).stdout, /2 nodes, 1 to run, 1 cached/);
});

test('a chat JSONL line that is not a conversation is refused at FILE:LINE by validate', async () => {
  const good = JSON.stringify({
    messages: [
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: 'hello' },
    ],
  });
  const dir = await tmpProject({
    'e.yaml':
      'name: e\nmodels:\n  base: { provider: worker, tiny: 0, model: tiny }\n  api: { provider: openai, model: x, base_url: "http://127.0.0.1:1/v1" }\nstages:\n  t: { uses: sft, with: { model: base, data: chat.jsonl } }\n  u: { uses: sft, with: { model: api, data: chat.jsonl } }\n',
    'chat.jsonl': `${good}\n{"prompt": "hi", "completion": "hello"}\n`,
  });
  const r = await cli(['validate', 'e.yaml'], { cwd: dir });
  assert.is(r.exitCode, 2, r.stderr);
  assert.match(
    r.stderr,
    /e\.yaml:6:46: stages\.t\.with\.data: chat\.jsonl:2: not a conversation: has no "messages" array/,
  );
  assert.match(
    r.stderr,
    /e\.yaml:7:34: stages\.u\.with\.model: sft trains the weights a trainer worker holds: api must be a models: entry with provider: worker/,
  );
  assert.not.match(r.stderr, /\n\s+at /, 'no stack trace');
});

test.run();
