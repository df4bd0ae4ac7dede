// The trainer worker's HTTP service from the TypeScript side: the real worker
// (`python -m mlepipe_worker serve --tiny` in .venv/trainer, a random tiny
// Qwen3) on a free port, sampled through the real `openai` client and trained
// and saved through TrainerClient.
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import OpenAI from 'openai';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { Batch, BatchTrajectory } from '../trainer/batch.js';
import { TrainerClient, type Health } from '../trainer/client.js';
import { startLocalWorker, type LocalWorker } from '../trainer/local.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const python = join(root, '.venv', 'trainer', 'bin', 'python');
const messages = [
  { role: 'system' as const, content: 'you are an ml agent' },
  { role: 'user' as const, content: 'the agent reads the csv' },
];

let worker: LocalWorker | undefined;
let url = '';
let ckptDir = '';

test.before(async () => {
  assert.ok(
    existsSync(python),
    `${python} is missing: run 'bash scripts/setup-python.sh trainer' to create the trainer environment`,
  );
  ckptDir = await mkdtemp(join(tmpdir(), 'mlepipe-worker-ckpt-'));
  // Started as stages start theirs: a free port, ready once it listens and answers /health.
  worker = await startLocalWorker({ model: { tiny: true }, ckptDir, threads: 1, log: () => {} });
  url = worker.url;
});

test.after(async () => {
  await worker?.stop();
  if (ckptDir) await rm(ckptDir, { recursive: true, force: true });
});

interface WorkerChoice extends OpenAI.Chat.Completions.ChatCompletion.Choice {
  token_ids: number[];
}

function trajectory(sample: number, advantage: number, promptIds: number[], c: WorkerChoice): BatchTrajectory {
  return {
    id: `g#${sample}`,
    group_id: 'g',
    task_id: 't',
    sample,
    reward: advantage,
    advantage,
    turn_advantages: [advantage],
    masked: false,
    mask_reason: null,
    variables: {},
    messages: [
      ...messages.map((m) => ({ ...m, loss_mask: 0 as const })),
      { role: 'assistant', content: c.message.content ?? '', loss_mask: 1 },
    ],
    turns: [{ prompt_ids: promptIds, token_ids: c.token_ids, logprobs: c.logprobs!.content!.map((e) => e.logprob) }],
  };
}

test('the openai client samples token ids and log-probabilities; TrainerClient scores, updates and saves', async () => {
  const trainer = new TrainerClient(url);
  const health: Health = await trainer.health();
  assert.is(health.status, 'ok');
  assert.is(health.step, 0);
  assert.match(health.tokenizer_sha256 ?? '', /^[0-9a-f]{64}$/);
  assert.match(health.chat_template_sha256 ?? '', /^[0-9a-f]{64}$/);

  const openai = new OpenAI({ baseURL: `${url}/v1`, apiKey: 'unused', maxRetries: 0 });
  const res = await openai.chat.completions.create({
    model: 'policy',
    messages,
    n: 2,
    temperature: 1,
    max_tokens: 6,
    seed: 7,
    logprobs: true,
  });
  const promptIds = (res as unknown as { prompt_token_ids: number[] }).prompt_token_ids;
  assert.ok(Array.isArray(promptIds) && promptIds.length > 0, 'the response carries prompt_token_ids');
  assert.is(res.choices.length, 2);
  const choices = res.choices as WorkerChoice[];
  for (const c of choices) {
    assert.ok(c.token_ids.length > 0);
    assert.is(c.logprobs?.content?.length, c.token_ids.length);
  }

  const scored = await trainer.score(choices.map((c) => ({ prompt_ids: promptIds, token_ids: c.token_ids })));
  choices.forEach((c, i) => {
    c.logprobs!.content!.forEach((e, j) =>
      assert.ok(
        Math.abs(e.logprob - scored[i].logprobs[j]) < 1e-4,
        `choice ${i} token ${j}: ${e.logprob} vs ${scored[i].logprobs[j]}`,
      ),
    );
  });

  const identity = { tokenizer_sha256: health.tokenizer_sha256!, chat_template_sha256: health.chat_template_sha256! };
  const batch: Batch = {
    format: 'mlepipe-grpo-batch/1',
    step: 1,
    advantage: 'grpo',
    group_size: 2,
    hyper: { lr: 1e-3, clip_low: 0.2, clip_high: 0.28, kl: 0, temperature: 1 },
    trajectories: [trajectory(0, 1, promptIds, choices[0]), trajectory(1, -1, promptIds, choices[1])],
    groups: [{ group_id: 'g', mean: 0, std: 1, zero_signal: false }],
    loss_agg_mode: 'seq-mean-token-mean',
    tokenizer: identity,
  };
  const update = await trainer.update(batch);
  assert.is(update.step, 1);
  assert.is(update.skipped, false);
  assert.ok(Number.isFinite(update.loss) && Number.isFinite(update.grad_norm), JSON.stringify(update));
  assert.is(update.loss_tokens, choices[0].token_ids.length + choices[1].token_ids.length);

  const saved = await trainer.save(1, 'step-00001');
  assert.is(saved.step, 1);
  assert.ok(saved.path.endsWith('/step-00001'), saved.path);
  const state = JSON.parse(await readFile(join(saved.path, 'state.json'), 'utf8'));
  assert.is(state.step, 1);
  assert.is(state.tokenizer_sha256, identity.tokenizer_sha256);

  const other = { ...batch, tokenizer: { ...identity, tokenizer_sha256: '0'.repeat(64) } };
  const refused = await trainer.update(other).then(
    () => 'accepted',
    (err: Error) => err.message,
  );
  assert.match(refused, /HTTP 409/);
  assert.match(refused, new RegExp(identity.tokenizer_sha256));
  assert.is((await trainer.health()).step, 1);
});

test.run();
