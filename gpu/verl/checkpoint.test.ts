// The weights a finished verl job hands on: the PPO trainer's actor folder
// and the SFT trainer's own, each from the step verl's tracker names, laid
// out as a worker checkpoint; a job that saved no Hugging Face weights says
// which setting would have.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { collectVerlCheckpoint, verlStepsWithWeights } from './checkpoint.js';

async function job(layout: string[], step: number): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'verl-ckpt-'));
  await writeFile(join(dir, 'latest_checkpointed_iteration.txt'), String(step));
  for (const s of [1, step]) {
    const hf = join(dir, `global_step_${s}`, ...layout);
    await mkdir(hf, { recursive: true });
    for (const f of ['config.json', 'model.safetensors', 'tokenizer.json'])
      await writeFile(join(hf, f), `${f} of step ${s}`);
  }
  return dir;
}

async function failsWith(p: Promise<unknown>, re: RegExp): Promise<void> {
  const err = await p.then(
    () => undefined,
    (e: Error) => e,
  );
  assert.ok(err, 'it should have failed');
  assert.match(err.message, re);
}

test("a GRPO job: the last step's actor/huggingface, weights in model/, the tokenizer without them", async () => {
  const dir = await job(['actor', 'huggingface'], 4);
  const dest = join(dir, 'out');
  assert.equal(await collectVerlCheckpoint(dir, dest, 'ppo'), { step: 4 });
  assert.is(await readFile(join(dest, 'model', 'model.safetensors'), 'utf8'), 'model.safetensors of step 4');
  assert.ok(existsSync(join(dest, 'tokenizer', 'tokenizer.json')));
  assert.not.ok(existsSync(join(dest, 'tokenizer', 'model.safetensors')));
  assert.equal(JSON.parse(await readFile(join(dest, 'mlepipe-worker.json'), 'utf8')), {
    format: 'mlepipe-worker-checkpoint/1',
    base: { path: join(dest, 'model') },
    lora: null,
  });
});

test('an SFT job keeps its weights in the step folder itself; the wrong layout names the setting', async () => {
  const sft = await job(['huggingface'], 2);
  assert.equal(await collectVerlCheckpoint(sft, join(sft, 'out'), 'sft'), { step: 2 });
  await failsWith(
    collectVerlCheckpoint(sft, join(sft, 'out2'), 'ppo'),
    /actor_rollout_ref\.actor\.checkpoint\.save_contents must hold hf_model/,
  );
  const none = await mkdtemp(join(tmpdir(), 'verl-ckpt-'));
  await failsWith(collectVerlCheckpoint(none, join(none, 'out'), 'sft'), /names no step/);
});

test("a chosen step's weights, not the tracker's; the steps that kept weights are the ones to choose from", async () => {
  const dir = await job(['actor', 'huggingface'], 4);
  // A step verl saved without Hugging Face weights is no candidate.
  await mkdir(join(dir, 'global_step_2', 'actor'), { recursive: true });
  assert.equal(await verlStepsWithWeights(dir, 'ppo'), [1, 4]);
  const dest = join(dir, 'out');
  assert.equal(await collectVerlCheckpoint(dir, dest, 'ppo', 1), { step: 1 });
  assert.is(await readFile(join(dest, 'model', 'model.safetensors'), 'utf8'), 'model.safetensors of step 1');
  await failsWith(
    collectVerlCheckpoint(dir, join(dir, 'out2'), 'ppo', 2),
    /every checkpoint a choice among them needs/,
  );
});

test.run();
