// The grpo stage through the built CLI: the template policy learns on a tiny
// fixed task set and its checkpoint serves an eval; a run killed mid-way
// resumes after its last finished step; a trainer worker receives the
// protocol's batches; verl-export writes its run directory. A trained node's
// output holds its curves as TensorBoard event files. The tests share
// one cache, so the tasks they all start from are generated once.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { exists } from '../../core/fs.js';
import { mean, sem } from '../../core/stats.js';
import {
  cli,
  cliStart,
  tmpProject,
  waitFor,
  nodeKey,
  nodeLog,
  outputsOf,
  publishedSteps,
  readJsonl,
  sharedCacheSettings,
  shareTaskNodes,
} from '../helpers.js';
import { startTestWorker } from './test-worker.js';
import { readScalars } from '../train-log/read.js';

// The generated tasks come from another test file that built the same key, when one did (test/shared-tasks.ts).
shareTaskNodes();

const TASKS = `  tasks: { uses: generate, with: { seeds: mlebench-tabular, count: 3, samples: [60, 100], seed: 4 } }
  verified: { uses: filter, needs: [tasks], with: { val: 0 } }
`;

const { cache, settings } = await sharedCacheSettings();
const project = (yaml: string) => tmpProject({ 'e.yaml': yaml }, settings);
const logs = async (dir: string, node: string) => nodeLog(cache, await nodeKey(dir, node));

const out = (dir: string, node: string) => outputsOf(dir, node);
const jsonl = readJsonl;

test('the template policy learns on a fixed task set (seeded), and its checkpoint is an eval policy', async () => {
  const dir = await project(`name: learn
stages:
${TASKS}  rl: { uses: grpo, needs: [verified], with: { split: all, steps: 6, batch_size: 2, group_size: 4, max_turns: 3, lr: 0.2, seed: 0 } }
  test: { uses: eval, needs: [verified, rl], with: { policy: template, max_turns: 3 } }
tables:
  curve: { from: rl, rows: curve, columns: [step, reward_mean, valid_rate, entropy] }
figures:
  curve: { from: rl, rows: curve, kind: line, x: step, y: reward_mean }
`);
  const r = await cli(['run', 'e.yaml'], { cwd: dir });
  assert.is(r.exitCode, 0, r.stderr);
  assert.match(r.stdout, /curve\nstep\s+reward_mean\s+valid_rate\s+entropy\n1\s/);
  assert.match(r.stderr, /figure curve: reports\/learn\/curve\.svg/);
  const rl = await out(dir, 'rl');
  const rewards = async (k: number) =>
    (await jsonl(join(rl, 'steps', `step_0000${k}.jsonl`))).map((t) => t.reward as number);
  const first = [...(await rewards(1)), ...(await rewards(2))];
  const last = [...(await rewards(5)), ...(await rewards(6))];
  const margin = mean(last) - mean(first);
  const noise = Math.sqrt(sem(first) ** 2 + sem(last) ** 2);
  console.log(
    `reward: first two steps ${mean(first).toFixed(3)}, last two ${mean(last).toFixed(3)}, noise ${noise.toFixed(3)}`,
  );
  assert.ok(margin > 2 * noise, `margin ${margin} vs noise ${noise}`);
  const curve = await jsonl(join(rl, 'metrics.jsonl'));
  assert.is(curve.length, 6);
  assert.ok(curve[5].entropy < curve[0].entropy, 'the policy sharpens');
  // The same curves as TensorBoard scalars in the node's output, step by step (float32 there).
  const scalars = await readScalars(join(rl, 'tensorboard'));
  for (const tag of ['reward_mean', 'valid_rate', 'entropy', 'lr']) {
    assert.equal(
      scalars[tag].map(([step]) => step),
      [1, 2, 3, 4, 5, 6],
      tag,
    );
    scalars[tag].forEach(([, v], i) =>
      assert.ok(Math.abs(v - curve[i][tag]) < 1e-6, `${tag} at step ${i + 1}: ${v} vs ${curve[i][tag]}`),
    );
  }
  // Checkpoints every step, and the final one.
  assert.is((await readdir(join(rl, 'checkpoints'))).length, 6);
  const ck = JSON.parse(await readFile(join(rl, 'checkpoint.json'), 'utf8'));
  assert.is(ck.step, 6);
  const results = await jsonl(join(await out(dir, 'test'), 'results.jsonl'));
  assert.is(results.length, 3);
  assert.ok(results.every((x) => x.policy === 'template'));
});

test('kill -9 during training: the rerun resumes after the last finished step', async () => {
  const dir = await project(`name: resume
stages:
${TASKS}  rl: { uses: grpo, needs: [verified], with: { split: all, steps: 3, batch_size: 1, group_size: 2, max_turns: 2 } }
`);
  // This node's checkpoints only: the cache holds the other tests' nodes too.
  const key = await nodeKey(dir, 'rl');
  const first = cliStart(['run', 'e.yaml'], { cwd: dir });
  const finishedSteps = () => publishedSteps(join(cache, 'items'), key);
  await waitFor(async () => (await finishedSteps()) >= 1, 120_000, 'the first step');
  process.kill(first.pid!, 'SIGKILL');
  await first.catch(() => undefined);
  const done = await finishedSteps();
  assert.ok(done >= 1 && done < 3, `${done} steps finished before the kill`);
  const again = await cli(['run', 'e.yaml'], { cwd: dir });
  assert.is(again.exitCode, 0, again.stderr);
  assert.match(await logs(dir, 'rl'), /step 1: finished by an earlier attempt/);
  const curve = await jsonl(join(await out(dir, 'rl'), 'metrics.jsonl'));
  assert.equal(
    curve.map((m) => m.step),
    [1, 2, 3],
  );
});

test('trainer: worker sends each step to the worker (schema-checked batches, masks, advantages, saves)', async () => {
  const worker = await startTestWorker();
  try {
    const dir = await project(`name: worker
models:
  served: { provider: openai, base_url: "${worker.url}/v1", model: test-policy }
stages:
${TASKS}  rl: { uses: grpo, needs: [verified], with: { policy: served, trainer: worker, split: all, steps: 2, batch_size: 1, group_size: 2, max_turns: 3 } }
`);
    const r = await cli(['run', 'e.yaml'], { cwd: dir });
    assert.is(r.exitCode, 0, r.stderr);
    assert.match(await logs(dir, 'rl'), /trainer worker: ok, step 0, test-policy/);
    assert.is(worker.batches.length, 2);
    assert.equal(worker.saves, [
      { step: 1, tag: 'step-00001' },
      { step: 2, tag: 'step-00002' },
    ]);
    // Two rollouts of one task per step, two replies each (copy the sample, answer).
    assert.is(worker.generations, 8);
    const b = worker.batches[0];
    assert.is(b.format, 'mlepipe-grpo-batch/1');
    assert.equal([b.step, b.group_size, b.advantage, b.hyper.lr, b.hyper.clip_high], [1, 2, 'grpo', 1e-6, 0.28]);
    assert.is(b.trajectories.length, 2);
    const t = b.trajectories[0];
    assert.equal(
      t.messages.map((m: { role: string; loss_mask: number }) => [m.role, m.loss_mask]),
      [
        ['system', 0],
        ['user', 0],
        ['assistant', 1],
        ['user', 0],
        ['assistant', 1],
      ],
    );
    assert.equal(t.messages[2].logprobs, [-0.5, -0.5, -0.5]);
    // The exact tokens of each reply, the worker's tokenizer and the loss's aggregation.
    assert.equal(
      t.turns.map((x: { prompt_ids: number[]; token_ids: number[] }) => [x.prompt_ids, x.token_ids]),
      [
        [
          [1, 2, 3],
          [7, 8, 9],
        ],
        [[1, 2, 4], [7]],
      ],
    );
    assert.equal(t.turns[0].logprobs, [-0.5, -0.5, -0.5]);
    assert.is(b.tokenizer.tokenizer_sha256, 'a'.repeat(64));
    assert.is(b.loss_agg_mode, 'token-mean');
    // Both rollouts did the same thing: equal rewards, so the group carries no signal.
    assert.ok(b.groups[0].zero_signal);
    assert.equal(
      b.trajectories.map((x: { advantage: number }) => x.advantage),
      [0, 0],
    );
    assert.is(t.variables.execute, 1);
  } finally {
    await worker.close();
  }
});

test('select: best-val hands on the best validated step, not the last; its step and reward are in the metrics', async () => {
  // The policy submits only after its second update: the validation passes of steps 1 and 3 score lower than 2's.
  const worker = await startTestWorker({ submits: (updates) => updates === 2 });
  try {
    const dir = await project(`name: best
models:
  served: { provider: openai, base_url: "${worker.url}/v1", model: test-policy }
stages:
${TASKS}  rl: { uses: grpo, needs: [verified], with: { policy: served, trainer: worker, split: all, val_split: all, steps: 3, batch_size: 1, group_size: 2, max_turns: 3, eval_every: 1, select: best-val } }
`);
    const r = await cli(['run', 'e.yaml'], { cwd: dir });
    assert.is(r.exitCode, 0, r.stderr);
    const rl = await out(dir, 'rl');
    const val = (await jsonl(join(rl, 'metrics.jsonl'))).map((m) => m.val_reward as number);
    assert.ok(val[1] > val[0] && val[1] > val[2], `validation rewards ${val}`);
    // A running worker keeps its checkpoints on its own disk: the node names the chosen one.
    assert.equal(JSON.parse(await readFile(join(rl, 'worker-checkpoint.json'), 'utf8')), {
      path: '/ckpt/step-00002',
      step: 2,
    });
    const lock = JSON.parse(await readFile(join(dir, 'e.lock.json'), 'utf8'));
    assert.equal([lock.nodes.rl.metrics.selected_step, lock.nodes.rl.metrics.selected_val_reward], [2, val[1]]);
  } finally {
    await worker.close();
  }
});

test('trainer: verl-export writes parquet rows, the agent-loop config and trainer overrides, and launches nothing', async () => {
  const dir = await project(`name: export
models:
  big: { provider: openai, base_url: "http://127.0.0.1:1/v1", model: qwen3-8b, path: Qwen/Qwen3-8B }
stages:
  tasks: { uses: generate, with: { seeds: mlebench-tabular, count: 3, samples: [60, 100], seed: 4 } }
  verified: { uses: filter, needs: [tasks], with: { val: 1 } }
  rl: { uses: grpo, needs: [verified], with: { policy: big, trainer: verl-export, steps: 100, batch_size: 16, group_size: 4, max_turns: 20 } }
`);
  const r = await cli(['run', 'e.yaml'], { cwd: dir });
  assert.is(r.exitCode, 0, r.stderr);
  const verl = join(await out(dir, 'rl'), 'verl');
  const { parquetReadObjects } = await import('hyparquet');
  const buf = await readFile(join(verl, 'data', 'train.parquet'));
  const rows = (await parquetReadObjects({
    file: buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength),
  })) as Array<Record<string, any>>;
  assert.is(rows.length, 2);
  assert.equal(
    rows[0].prompt.map((m: { role: string }) => m.role),
    ['system', 'user'],
  );
  assert.match(rows[0].prompt[0].content, '<think>');
  assert.equal(
    [rows[0].data_source, rows[0].agent_name, rows[0].ability, rows[0].reward_model.style, rows[0].extra_info.split],
    ['mlepipe', 'mlepipe_react', 'mle', 'rule', 'train'],
  );
  // Nothing points into the cache's staging folder: the tasks travel inside the export.
  assert.not.ok('task_dir' in rows[0].extra_info);
  assert.ok(await exists(join(verl, 'tasks', rows[0].extra_info.task_id, 'private', 'evaluator.py')));
  for (const f of ['reward_fn.py', 'mlepipe_verl/agent_loop.py', 'sandbox.json'])
    assert.ok(await exists(join(verl, f)), f);
  const overrides = await readFile(join(verl, 'trainer_overrides.yaml'), 'utf8');
  assert.not.match(overrides, join(cache, 'tmp'));
  for (const o of [
    'actor_rollout_ref.rollout.name=vllm',
    'actor_rollout_ref.rollout.mode=async',
    'actor_rollout_ref.rollout.agent.agent_loop_config_path=agent_loop.yaml',
    'reward.custom_reward_function.path=reward_fn.py',
    'actor_rollout_ref.rollout.n=4',
    'actor_rollout_ref.actor.clip_ratio_high=0.28',
    'data.train_batch_size=16',
    'actor_rollout_ref.model.path=Qwen/Qwen3-8B',
    'trainer.total_training_steps=100',
  ])
    assert.match(overrides, o);
  assert.match(await readFile(join(verl, 'launch.sh'), 'utf8'), 'python3 -m mlepipe_verl.launch');
  assert.match(await readFile(join(verl, 'agent_loop.yaml'), 'utf8'), 'max_turns: 20');
});

test.run();
