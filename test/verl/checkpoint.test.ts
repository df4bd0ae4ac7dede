// The weights a verl GRPO job hands on, from checkpoints verl's own PPO trainer
// saved (its _save_checkpoint in .venv/verl; the actor's save is the one
// stand-in, test/verl/ppo_checkpoint.py says why): the collector takes the step
// verl itself would resume from, and its layout loads as a worker checkpoint.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execa } from 'execa';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { collectVerlCheckpoint } from '../../gpu/verl/checkpoint.js';
import { ROOT, tmpProject } from '../helpers.js';

const VERL = join(ROOT, '.venv', 'verl', 'bin', 'python');
const TRAINER = join(ROOT, '.venv', 'trainer', 'bin', 'python');

test("verl's PPO trainer saves steps 2 and 4: the collector lays out step 4's actor weights, which verl resumes from and the worker loads", async () => {
  const dir = await tmpProject({});
  const model = join(dir, 'tiny');
  const made = await execa(VERL, [join(ROOT, 'gpu', 'verl', 'tests', 'sft_driver.py'), 'model', model], {
    reject: false,
    all: true,
  });
  assert.is(made.exitCode, 0, made.all);
  const checkpoints = join(dir, 'checkpoints');
  const r = await execa(VERL, [join(ROOT, 'test', 'verl', 'ppo_checkpoint.py'), checkpoints, model, '2', '4'], {
    reject: false,
    all: true,
  });
  assert.is(r.exitCode, 0, r.all);
  const out = JSON.parse(r.stdout.trim().split('\n').pop()!) as {
    saved: Array<{ path: string; step: number; keep: number }>;
    latest: string;
  };
  assert.equal(out.saved, [
    { path: 'global_step_2/actor', step: 2, keep: 3 },
    { path: 'global_step_4/actor', step: 4, keep: 3 },
  ]);
  assert.is(out.latest, 'global_step_4');

  const dest = join(dir, 'checkpoint');
  assert.equal(await collectVerlCheckpoint(checkpoints, dest, 'ppo'), { step: 4 });
  for (const f of ['model/config.json', 'model/model.safetensors', 'tokenizer/tokenizer.json', 'mlepipe-worker.json'])
    assert.ok(existsSync(join(dest, f)), f);
  assert.not.ok(existsSync(join(dest, 'tokenizer', 'model.safetensors')));
  assert.is(JSON.parse(await readFile(join(dest, 'mlepipe-worker.json'), 'utf8')).lora, null);
  // The worker serves it as a full checkpoint (an eval's checkpoint: rl entry), on the tokenizer saved beside it.
  const load = await execa(
    TRAINER,
    [
      '-c',
      'import sys; from mlepipe_worker.__main__ import build, parse; w = build(parse(["serve", "--model", sys.argv[1], "--lora-rank", "0", "--device", "cpu", "--ckpt-dir", sys.argv[2]])); print(w.policy.lora, type(w.policy.model).__name__)',
      dest,
      join(dir, 'ck'),
    ],
    { cwd: join(ROOT, 'gpu', 'worker'), reject: false, all: true },
  );
  assert.is(load.stdout.trim().split('\n').pop(), 'None Qwen3ForCausalLM', load.all);
});

test.run();
