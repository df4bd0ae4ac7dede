// verl trains for real on this CPU, through the built CLI and the shipped config
// (experiments/sandmle/verl-cpu.yaml): a tiny random Qwen3 that vLLM's CPU build serves is written by the sft
// node, fine-tuned by verl's SFT trainer on a scripted agent's runs until it writes their opening action, then
// trained by verl's GRPO with vLLM's CPU build as the rollout engine, mlepipe's agent loop and the sandbox
// service's jails, for two steps; its checkpoint is evaluated served by the trainer worker and by vLLM.
//
// What it holds: some rollouts earn a reward and others do not, so an update moves the weights; after that
// update the rollout engine's log-probabilities of what it sampled still agree with the actor's (verl's
// rollout_corr/k3_kl), which is only so when verl's weight sync put the new weights into vLLM; the weights
// the node hands on differ from the ones it started from; both servers load them and act.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { copyFile, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { cli, nodeLogs, outputsOf, readJsonl, ROOT, tmpProject } from '../helpers.js';

const FILE = 'verl-cpu.yaml';

test('verl SFT → verl GRPO on this CPU with vLLM’s CPU build → the checkpoint served by the worker and by vLLM', async () => {
  const dir = await tmpProject({});
  await copyFile(join(ROOT, 'experiments', 'sandmle', FILE), join(dir, FILE));
  // Two verl jobs and two model servers: about 5 minutes on an idle 2-core machine, more beside the suite's other lane.
  const r = await cli(['run', FILE], { cwd: dir, limitMs: 900_000 });
  const logs = await nodeLogs(dir);
  assert.is(r.exitCode, 0, `${r.stderr}\n${logs.slice(-4000)}`);

  // The SFT learned the demonstrations' opening action.
  const sft = await readJsonl(join(await outputsOf(dir, 'sft', FILE), 'metrics.jsonl'));
  assert.ok(sft[sft.length - 1].train_loss < sft[0].train_loss / 10, `SFT loss ${sft[0].train_loss} → ${sft[sft.length - 1].train_loss}`);

  const rl = await outputsOf(dir, 'rl', FILE);
  const curve = await readJsonl(join(rl, 'metrics.jsonl'));
  assert.equal(
    curve.map((c) => c.step),
    [1, 2],
  );
  // Some rollouts earn a reward: the fine-tuned policy writes valid actions.
  assert.ok(
    curve.some((c) => c.reward_max > 0),
    JSON.stringify(curve),
  );
  // A step whose group's rewards differ moves the weights, and a later step samples from the moved weights.
  const moved = curve.findIndex((c) => c.grad_norm > 0);
  assert.ok(moved >= 0 && moved < curve.length - 1, `an update before the last step: ${JSON.stringify(curve)}`);
  // verl compares the rollout engine's log-probabilities of each sampled token with the actor's before its
  // update: without the weight sync (vLLM's CPU layers reading a packed copy of the old weights), the step after
  // an update at this learning rate is far apart.
  for (const c of curve) assert.ok(c.rollout_k3_kl !== null && c.rollout_k3_kl < 5e-3, `step ${c.step}: rollout/actor k3 KL ${c.rollout_k3_kl}`);

  // The weights the node hands on are not the ones it started from.
  const before = await readFile(join(await outputsOf(dir, 'sft', FILE), 'checkpoint', 'model', 'model.safetensors'));
  const after = await readFile(join(rl, 'checkpoint', 'model', 'model.safetensors'));
  assert.not.ok(before.equals(after), 'the GRPO checkpoint equals the SFT one');

  // Both servers load the checkpoint and the policy acts on every task under each.
  assert.match(logs, /vLLM server: http:\/\/127\.0\.0\.1:\d+\/v1, serving tiny-rl/);
  assert.match(logs, /trainer worker: http:\/\/127\.0\.0\.1:\d+, serving/);
  const runs = await readJsonl(join(await outputsOf(dir, 'test', FILE), 'trajectories.jsonl'));
  for (const policy of ['rl_worker', 'rl_vllm']) {
    const mine = runs.filter((t) => t.policy === policy);
    assert.is(mine.length, 4, policy);
    assert.ok(
      mine.every((t) => t.messages.length > 2 && !t.crashed),
      policy,
    );
  }
  // At temperature 0 both compute in float32 (vLLM's CPU build is told to: mlepipe_verl/vllm_serve.py), and each
  // writes the same opening reply on every task.
  for (const t of runs.filter((x) => x.policy === 'rl_worker')) {
    const other = runs.find((x) => x.policy === 'rl_vllm' && x.task_id === t.task_id);
    assert.is(other?.messages[2]?.content, t.messages[2].content, `${t.task_id}: the opening reply under vLLM`);
  }
  // The report shows the training curve and the evaluation by server.
  assert.match(r.stdout, /training\n/);
  assert.match(r.stdout, /served\n/);
});

test.run();
