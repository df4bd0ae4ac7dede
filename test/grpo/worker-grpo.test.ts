// GRPO on a real model through the built CLI: a `provider: worker` policy
// (the tiny random-weight Qwen3) served by a trainer worker the node starts
// itself, trained on the exact tokens it sampled. The reward favours longer
// replies (in characters), so the replies of a group differ; afterwards the
// final checkpoint scores the recorded replies, and the ones the step pushed
// up (positive advantage) have become more likely, the others less, and an
// eval serves the checkpoint the node left (`checkpoint: rl`). The run
// is killed after its first step and run again: it resumes from that step's
// worker checkpoint. Fake workers check the failures: one that dies in the
// middle of an update, one with another tokenizer, an endpoint without ids.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { exists } from '../../core/fs.js';
import { mean } from '../../core/stats.js';
import { startLocalWorker } from '../../gpu/trainer/local.js';
import { cli, cliStart, tmpProject, waitFor, nodeLogs, outputsOf, readJsonl, publishedSteps } from '../helpers.js';
import { startTestWorker } from './test-worker.js';

// Tasks with one-line descriptions: the tiny model's context is 1,024 tokens, and the ReAct prompt takes most of it.
const task = (id: string, what: string): Record<string, string> => ({
  [`t/${id}/task.json`]: JSON.stringify({
    id,
    modality: 'tabular',
    task_type: 'classification',
    metric: 'accuracy',
    is_lower_better: false,
  }),
  [`t/${id}/public/description.md`]: `${what}\n`,
  [`t/${id}/private/evaluator.py`]: 'import json\nprint(json.dumps({"error": "not graded here"}))\n',
});
const TASKS = {
  ...task('alpha', 'Predict the label of each row.'),
  ...task('beta', 'Predict the price of each house.'),
};

const logs = nodeLogs;
const out = (dir: string, node: string) => outputsOf(dir, node);
const jsonl = readJsonl;

/** Steps published in the project's own cache. */
const finishedSteps = (dir: string) => publishedSteps(join(dir, '.mlepipe', 'items'));

const REAL = `name: real
models:
  tiny: { provider: worker, tiny: 0, model: tiny-qwen3, lora_rank: 8, max_tokens: 10 }
  tuned: { provider: worker, checkpoint: rl, model: tuned, max_tokens: 10 }
rewards:
  verbose: reply_chars / 40
stages:
  rl: { uses: grpo, with: { policy: tiny, trainer: worker, tasks: t, split: all, reward: verbose, steps: 3, batch_size: 2, group_size: 6, max_turns: 1, lr: 0.01, seed: 3 } }
  test: { uses: eval, needs: [rl], with: { policy: tuned, tasks: t, split: all, max_turns: 1 } }
`;

/** The project's item folders that hold a trainer worker's checkpoints. */
async function checkpointStores(dir: string): Promise<string[]> {
  const items = join(dir, '.mlepipe', 'items');
  const stores = [];
  for (const key of await readdir(items))
    if (await exists(join(items, key, 'worker-checkpoints'))) stores.push(join(items, key, 'worker-checkpoints'));
  return stores;
}

test('a tiny worker model trained through the CLI: killed and resumed, its replies move with their advantages', async () => {
  const dir = await tmpProject({ ...TASKS, 'e.yaml': REAL });
  const first = cliStart(['run', 'e.yaml'], { cwd: dir });
  await waitFor(async () => (await finishedSteps(dir)) >= 1, 300_000, 'the first step');
  process.kill(first.pid!, 'SIGKILL');
  await first.catch(() => undefined);
  const done = await finishedSteps(dir);
  assert.ok(done >= 1, `${done} steps finished before the kill`);
  const r = await cli(['run', 'e.yaml'], { cwd: dir });
  assert.is(r.exitCode, 0, r.stderr);
  // Dozens of requests listen on the node's signal at once; Node must not warn of a leak.
  assert.not.match(r.stderr, 'MaxListenersExceededWarning');
  const log = await logs(dir);
  if (done < 3) {
    assert.match(log, /step 1: finished by an earlier attempt/);
    assert.match(log, new RegExp(`trainer worker: resumed from \\S+step-0000${done}`));
  }
  const rl = await out(dir, 'rl');
  const curve = await jsonl(join(rl, 'metrics.jsonl'));
  assert.equal(
    curve.map((m) => m.step),
    [1, 2, 3],
  );
  // max_tokens 10 cuts nearly every reply of a random model (it rarely samples its end token that soon), and the curve says so.
  for (const m of curve) assert.ok(m.truncated_rate > 0.5, `truncated_rate ${m.truncated_rate}`);
  assert.ok(await exists(join(rl, 'checkpoint', 'state.json')), 'the node holds the last checkpoint');
  // The item store keeps the resume point whole and, of keep_checkpoints' two newest marked steps, the other as
  // weights only (retention.ts): step 1's checkpoint is gone, step 2's has no optimiser state.
  const stores = await checkpointStores(dir);
  assert.is(stores.length, 1);
  assert.equal((await readdir(stores[0])).filter((n) => n.startsWith('step-')).sort(), ['step-00002', 'step-00003']);
  assert.not.ok(await exists(join(stores[0], 'step-00002', 'optimizer.pt')));
  assert.ok(await exists(join(stores[0], 'step-00003', 'optimizer.pt')));
  // A later stage serves that checkpoint on a worker of its own.
  const results = await jsonl(join(await out(dir, 'test'), 'results.jsonl'));
  assert.equal(
    results.map((x) => [x.policy, x.task_id]),
    [
      ['tuned', 'alpha'],
      ['tuned', 'beta'],
    ],
  );
  assert.match(log, /trainer worker: http:\S+, serving checkpoint\n/);
  // GRPO's per-turn sequences are long: the worker it starts recomputes activations, as sft's does.
  assert.match(log, /trainer worker: gradient checkpointing on\n/);

  // The last step's replies, scored under the final checkpoint on the tokens they were sampled as: one
  // update lies between their old log-probabilities (from the batch) and these.
  const worker = await startLocalWorker({
    model: { dir: join(rl, 'checkpoint') },
    ckptDir: join(dir, 'scratch'),
    threads: 1,
    log: () => {},
  });
  try {
    const trajectories = await jsonl(join(rl, 'steps', 'step_00003.jsonl'));
    const tokens = trajectories.map((t) => t.turns[0].tokens);
    const scored = await worker.client.score(
      tokens.map((x) => ({ prompt_ids: x.prompt_ids, token_ids: x.token_ids })),
      { temperature: 1 },
    );
    const change = scored.map((s, i) => s.sum - tokens[i].logprobs.reduce((a: number, b: number) => a + b, 0));
    // The advantage's sign: the reward against its group's mean.
    const advantage = trajectories.map(
      (t) => t.reward - mean(trajectories.filter((u) => u.group_id === t.group_id).map((u) => u.reward)),
    );
    const up = change.filter((_, i) => advantage[i] > 0);
    const down = change.filter((_, i) => advantage[i] < 0);
    console.log(
      `advantages ${advantage.map((a) => a.toFixed(2)).join(' ')}\nΔ log p    ${change.map((c) => c.toFixed(2)).join(' ')}`,
    );
    assert.ok(up.length >= 2 && down.length >= 2, 'replies differ within groups');
    assert.ok(mean(up) > 0, `replies with positive advantage: mean change ${mean(up)}`);
    assert.ok(mean(down) < 0, `replies with negative advantage: mean change ${mean(down)}`);
  } finally {
    await worker.stop();
  }
});

/** The pid of the trainer worker serving this project's node (its checkpoints are in the project's cache). */
async function workerPid(dir: string): Promise<number | undefined> {
  for (const pid of await readdir('/proc').catch(() => [] as string[])) {
    if (!/^\d+$/.test(pid)) continue;
    const cmd = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
    if (cmd.includes('mlepipe_worker\0serve') && cmd.includes(join(dir, '.mlepipe', 'items'))) return Number(pid);
  }
  return undefined;
}

test('a plan that cannot fit the GPU is refused as the worker starts, before any rollout: LoRA over the trajectory context', async () => {
  const dir = await tmpProject({ ...TASKS, 'e.yaml': REAL });
  const r = await cli(['run', 'e.yaml', '--only', 'rl'], {
    cwd: dir,
    env: { MLEPIPE_WORKER_DEVICE_MEMORY_GIB: String(1 / 1024) },
  });
  assert.is(r.exitCode, 1, r.stderr);
  assert.match(
    r.stderr,
    /LoRA training of 0\.\d+B parameters needs [\d.]+ GiB .*\(planned: 1 × 32768 tokens a forward pass, gradient checkpointing on\)/,
  );
  assert.is(await finishedSteps(dir), 0);
});

test('a started worker that dies in the middle of a run fails the node with the step, and nothing is cached', async () => {
  const dir = await tmpProject({ ...TASKS, 'e.yaml': REAL.replace('steps: 3', 'steps: 2') });
  const run = cliStart(['run', 'e.yaml'], { cwd: dir });
  await waitFor(async () => (await finishedSteps(dir)) >= 1, 300_000, 'the first step');
  const pid = await workerPid(dir);
  assert.ok(pid, 'the worker process');
  process.kill(pid!, 'SIGKILL');
  const r = await run;
  assert.is(r.exitCode, 1, String(r.stderr));
  assert.match(String(r.stderr), /step 2: the trainer worker exited during the (step|update|save)/);
  // The step's rollouts stop once the worker is known to be gone (a request refused before its exit is reported
  // may wait for its first retry), rather than retrying its closed port through the whole backoff.
  const log = await logs(dir);
  assert.not.match(log, /connection failed .*; retry [2-9]\/\d+ in/, log);
  assert.is(await finishedSteps(dir), 1);
  assert.equal(await readdir(join(dir, '.mlepipe', 'nodes')).catch(() => []), []);
});

const FAKE = (url: string) => `name: fake
models:
  served: { provider: openai, base_url: "${url}/v1", model: test-policy }
stages:
  rl: { uses: grpo, with: { policy: served, trainer: worker, tasks: t, split: all, steps: 1, batch_size: 1, group_size: 2, max_turns: 2 } }
`;

test('a worker that dies during an update fails the node clearly, and nothing is cached', async () => {
  const worker = await startTestWorker({ dieOnUpdate: true });
  try {
    const dir = await tmpProject({ ...TASKS, 'e.yaml': FAKE(worker.url) });
    const r = await cli(['run', 'e.yaml'], { cwd: dir });
    assert.is(r.exitCode, 1, r.stderr);
    assert.match(r.stderr, /step 1: cannot reach the trainer worker at \S+\/update: .*is it running\?/, r.stderr);
    assert.is(await finishedSteps(dir), 0);
    assert.equal(await readdir(join(dir, '.mlepipe', 'nodes')).catch(() => []), []);
  } finally {
    await worker.close();
  }
});

test('a batch made with another tokenizer is refused by the worker, with both identities', async () => {
  const worker = await startTestWorker({ expectTokenizer: 'c'.repeat(64) });
  try {
    const dir = await tmpProject({ ...TASKS, 'e.yaml': FAKE(worker.url) });
    const r = await cli(['run', 'e.yaml'], { cwd: dir });
    assert.is(r.exitCode, 1, r.stderr);
    assert.match(
      r.stderr,
      /step 1: trainer worker POST \/update: HTTP 409: the batch was tokenised with another tokenizer \(batch \{"tokenizer_sha256":"a{64}"/,
      r.stderr,
    );
    assert.match(r.stderr, /worker \{"tokenizer_sha256":"c{64}"/);
  } finally {
    await worker.close();
  }
});

test('replies without token ids are refused for a worker (never tokenised again)', async () => {
  const worker = await startTestWorker({ tokens: false });
  try {
    const dir = await tmpProject({ ...TASKS, 'e.yaml': FAKE(worker.url) });
    const r = await cli(['run', 'e.yaml'], { cwd: dir });
    assert.is(r.exitCode, 1, r.stderr);
    assert.match(
      r.stderr,
      /trajectory step1\/0\/\w+#0, reply 1: the policy's endpoint returned no token ids/,
      r.stderr,
    );
    assert.is(worker.batches.length, 0);
  } finally {
    await worker.close();
  }
});

test.run();
