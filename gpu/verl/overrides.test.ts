// The rollout's tensor parallelism in the exported overrides: chosen from the
// model's size and the node's GPUs so that verl's replica count
// (GPUs / (tp × dp × pp), workers/rollout/llm_server.py) is never 0, and the
// weights' path, not the entry's label, as actor_rollout_ref.model.path;
// trainer.logger from the project settings' logger:, run through verl's own
// Tracking in .venv/verl.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync } from 'node:fs';
import { mkdtemp, mkdir, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { ParamError } from '../../core/errors.js';
import { type OverrideOptions, verlModelPath, verlOverrides } from './overrides.js';
import { sftOverrides } from './sft-export.js';
import { paramsBillions, rolloutTp } from './scale.js';
import { resolveModel } from '../../core/models.js';

const BASE: OverrideOptions = {
  model: 'Qwen/Qwen3-8B',
  groupSize: 4,
  batchSize: 16,
  steps: 1,
  maxTurns: 20,
  lr: 1e-6,
  clipLow: 0.2,
  clipHigh: 0.28,
  kl: 0,
  temperature: 1,
  advantage: 'grpo',
  lossAggMode: 'token-mean',
  nodes: 1,
  gpusPerNode: 8,
  rollout: 'vllm',
  promptLength: 4096,
  responseLength: 28672,
  checkpointEvery: 1,
  evalEvery: 0,
};
const value = (overrides: string[], key: string) =>
  overrides.find((o) => o.startsWith(`${key}=`))?.slice(key.length + 1);
const TP = 'actor_rollout_ref.rollout.tensor_model_parallel_size';

test('sizes read from model names and paths', () => {
  assert.equal(
    [
      'Qwen/Qwen3-8B',
      'Qwen3-14B',
      'Qwen/Qwen3-30B-A3B',
      '/models/qwen3-0.6b',
      'meta-llama/Llama-3.1-8B-Instruct',
      'tiny-coder',
    ].map(paramsBillions),
    [8, 14, 30, 0.6, 8, undefined],
  );
});

test('one replica per GPU up to 16B; larger models split, within a node', () => {
  assert.equal(
    [
      rolloutTp('Qwen/Qwen3-8B', 1),
      rolloutTp('Qwen/Qwen3-8B', 8),
      rolloutTp('Qwen/Qwen3-14B', 8),
      rolloutTp('Qwen/Qwen3-30B-A3B', 8),
      rolloutTp('Qwen/Qwen3-30B-A3B', 1),
    ],
    [1, 1, 1, 2, 1],
  );
  // verl's default of 2 would leave one GPU without a replica: the export always says.
  assert.is(value(verlOverrides({ ...BASE, gpusPerNode: 1 }), TP), '1');
  assert.is(value(verlOverrides({ ...BASE, model: 'Qwen/Qwen3-30B-A3B' }), TP), '2');
  assert.is(value(verlOverrides({ ...BASE, rolloutTp: 4 }), TP), '4');
  assert.throws(
    () => verlOverrides({ ...BASE, gpusPerNode: 1, rolloutTp: 2 }),
    (e: unknown) => e instanceof ParamError && e.param.join('.') === 'verl.rollout_tp',
  );
  assert.throws(
    () => verlOverrides({ ...BASE, rolloutTp: 3 }),
    (e: unknown) => e instanceof ParamError,
  );
});

test('the weights path: a folder beside the experiment made absolute, a hub id as written', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'verl-path-'));
  await mkdir(join(dir, 'weights'));
  assert.is(
    verlModelPath(resolveModel({ provider: 'openai', model: 'qwen3-8b', path: 'Qwen/Qwen3-8B' }), dir),
    'Qwen/Qwen3-8B',
  );
  assert.is(
    verlModelPath(resolveModel({ provider: 'openai', model: 'qwen3-8b', path: 'weights' }), dir),
    join(dir, 'weights'),
  );
  assert.is(
    verlModelPath(resolveModel({ provider: 'openai', model: 'qwen3-8b', path: './later' }), dir),
    join(dir, 'later'),
  );
  assert.is(
    verlModelPath(resolveModel({ provider: 'worker', model: 'm', path: '/shared/Qwen3-8B' }), dir),
    '/shared/Qwen3-8B',
  );
  assert.is(
    value(
      verlOverrides({
        ...BASE,
        model: verlModelPath(resolveModel({ provider: 'openai', model: 'qwen3-8b', path: 'weights' }), dir),
      }),
      'actor_rollout_ref.model.path',
    ),
    join(dir, 'weights'),
  );
});

test('validation before training only when validation was asked for (eval_every)', () => {
  assert.is(value(verlOverrides(BASE), 'trainer.val_before_train'), 'false');
  assert.is(value(verlOverrides({ ...BASE, evalEvery: 5 }), 'trainer.val_before_train'), 'true');
});

test('trainer.logger: the file logger mlepipe reads and TensorBoard always, W&B when the settings list it; the SFT export alike', async () => {
  assert.is(value(verlOverrides(BASE), 'trainer.logger'), "['console','file','tensorboard']");
  assert.is(
    value(verlOverrides({ ...BASE, loggers: ['tensorboard'] }), 'trainer.logger'),
    "['console','file','tensorboard']",
  );
  const withWandb = value(verlOverrides({ ...BASE, loggers: ['tensorboard', 'wandb'] }), 'trainer.logger')!;
  assert.is(withWandb, "['console','file','tensorboard','wandb']");
  const sft = {
    model: 'm',
    epochs: 1,
    lr: 1e-5,
    schedule: 'constant' as const,
    warmup: 0,
    maxLength: 1024,
    batchSize: 8,
    microBatchSize: 1,
    maxGradNorm: 1,
    gradientCheckpointing: false,
    seed: 0,
    nodes: 1,
    gpusPerNode: 8,
    gpuMemoryGib: 80,
  };
  assert.is(value(sftOverrides(sft, false), 'trainer.logger'), "['console','file','tensorboard']");
  assert.is(value(sftOverrides({ ...sft, loggers: ['wandb'] }, false), 'trainer.logger'), withWandb);

  // verl's Tracking takes the list as it is written, TensorBoard's files going to TENSORBOARD_DIR (which the job is given).
  const python = join(fileURLToPath(new URL('../..', import.meta.url)), '.venv', 'verl', 'bin', 'python');
  assert.ok(existsSync(python), `${python} is missing: run 'bash scripts/setup-python.sh verl'`);
  const dir = await mkdtemp(join(tmpdir(), 'verl-logger-'));
  const script = [
    'import ast, json, sys',
    'from verl.utils.tracking import Tracking',
    'from tensorboard.backend.event_processing.event_accumulator import EventAccumulator',
    "t = Tracking('mlepipe', 'grpo', default_backend=ast.literal_eval(sys.argv[1]), config={'trainer': {}})",
    "for k in (1, 2): t.log({'critic/rewards/mean': k / 4}, step=k)",
    'del t',
    'a = EventAccumulator(sys.argv[2]); a.Reload()',
    "print(json.dumps([[e.step, e.value] for e in a.Scalars('critic/rewards/mean')]))",
  ].join('\n');
  const env = {
    TENSORBOARD_DIR: join(dir, 'tb'),
    VERL_FILE_LOGGER_PATH: join(dir, 'metrics.jsonl'),
    WANDB_MODE: 'offline',
    WANDB_DIR: dir,
    WANDB_SILENT: 'true',
    WANDB_CONFIG_DIR: join(dir, 'wandb-config'),
  };
  const r = await execa(python, ['-c', script, withWandb, join(dir, 'tb')], { env, reject: false, all: true });
  assert.is(r.exitCode, 0, r.all);
  assert.equal(JSON.parse(r.stdout.trim().split('\n').pop()!), [
    [1, 0.25],
    [2, 0.5],
  ]);
  assert.is((await readFile(join(dir, 'metrics.jsonl'), 'utf8')).trim().split('\n').length, 2);
  assert.ok(existsSync(join(dir, 'wandb', 'latest-run')), 'no offline W&B run');
});

test.run();
