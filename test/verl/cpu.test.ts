// verl trains for real on this CPU, through the built CLI, on the path of the shipped CPU smoke run
// (experiments/sandmle/verl-cpu.yaml; docs/training.md, "A CPU smoke run"): the grpo node writes a tiny random
// Qwen3 that vLLM's CPU build serves, and verl's GRPO trains it for two steps with vLLM's CPU build as the
// rollout engine, mlepipe's agent loop and the sandbox service's jails; its checkpoint is then evaluated served
// by the trainer worker and by vLLM. The whole chain of that file (verl SFT first, so that the policy writes
// valid actions) takes twice as long and is run by hand; its figures are in the docs.
//
// What it holds: every rollout earns a reward (here the file's smoke reward: milestones less a length penalty, so
// a random policy's rollouts differ), so the first step's update moves the weights; at every step the rollout
// engine's log-probabilities of what it sampled agree with the actor's (verl's rollout_corr/k3_kl), which is only
// so when verl's weight sync put the actor's weights into vLLM (without it vLLM samples from its placeholder
// weights, and the k3 KL was 7.9 at step 1); the weights the node hands on differ from the ones it started from;
// both servers load them and answer on every task.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { cli, nodeLogs, outputsOf, readJsonl, tmpProject } from '../helpers.js';

const FILE = 'e.yaml';

const EXP = `name: verl-cpu-grpo
rewards:
  smoke: "0.1*format + 0.3*execute + 0.1*median + 0.2*bronze + 0.2*silver + 0.1*gold - 0.00001*reply_chars"
models:
  tiny: { provider: worker, tiny: 0, model: tiny, lora_rank: 0 }
  rl_worker: { provider: worker, checkpoint: rl, model: tiny-rl, lora_rank: 0, max_tokens: 32, temperature: 0 }
  rl_vllm: { provider: worker, checkpoint: rl, model: tiny-rl, lora_rank: 0, max_tokens: 32, temperature: 0, serve: vllm }
stages:
  tasks: { uses: generate, with: { backend: procedural, seeds: mlebench-tabular, count: 2, samples: [50, 80], seed: 1 } }
  verified: { uses: filter, needs: [tasks], with: { val: 0 } }
  rl:
    uses: grpo
    needs: [verified]
    with: { policy: tiny, trainer: verl, verl: { device: cpu }, split: all, steps: 2, batch_size: 1, group_size: 4, max_turns: 1, reward: smoke, temperature: 1.0, lr: 0.01 }
  test:
    uses: eval
    needs: [verified, rl]
    with: { split: all, policies: [rl_worker, rl_vllm], max_turns: 1 }
`;

/** The weights the job started from: the model path of the export (the tiny model the node wrote into its item store). */
const startedFrom = async (rl: string) => {
  const overrides = await readFile(join(rl, 'verl', 'trainer_overrides.yaml'), 'utf8');
  const path = /actor_rollout_ref\.model\.path=(\S+)/.exec(overrides)?.[1];
  assert.ok(path, overrides);
  return readFile(join(path!, 'model.safetensors'));
};

test('verl GRPO on this CPU with vLLM’s CPU build: two steps, the weight sync, the checkpoint served by the worker and by vLLM', async () => {
  const dir = await tmpProject({ [FILE]: EXP });
  // A verl job and two model servers: minutes, more beside the suite's other lane.
  const r = await cli(['run', FILE], { cwd: dir, limitMs: 600_000 });
  const logs = await nodeLogs(dir);
  assert.is(r.exitCode, 0, `${r.stderr}\n${logs.slice(-4000)}`);

  const rl = await outputsOf(dir, 'rl', FILE);
  const curve = await readJsonl(join(rl, 'metrics.jsonl'));
  assert.equal(
    curve.map((c) => c.step),
    [1, 2],
  );
  // Rewards came back from the sandbox service, and the group's rollouts differ.
  assert.ok(
    curve.every((c) => c.reward_mean !== 0 && c.reward_mean !== null),
    JSON.stringify(curve),
  );
  // The first step's update moved the weights, and the second step sampled from the moved weights.
  assert.ok(curve[0].grad_norm > 0, JSON.stringify(curve[0]));
  for (const c of curve)
    assert.ok(
      c.rollout_k3_kl !== null && c.rollout_k3_kl < 5e-3,
      `step ${c.step}: rollout/actor k3 KL ${c.rollout_k3_kl}`,
    );

  // The weights the node hands on are not the ones it started from.
  const after = await readFile(join(rl, 'checkpoint', 'model', 'model.safetensors'));
  assert.not.ok((await startedFrom(rl)).equals(after), 'the GRPO checkpoint equals the tiny model it started from');

  // Both servers load the checkpoint and answer on every task.
  assert.match(logs, /vLLM server: http:\/\/127\.0\.0\.1:\d+\/v1, serving tiny-rl/);
  assert.match(logs, /trainer worker: http:\/\/127\.0\.0\.1:\d+, serving/);
  const runs = await readJsonl(join(await outputsOf(dir, 'test', FILE), 'trajectories.jsonl'));
  for (const policy of ['rl_worker', 'rl_vllm']) {
    const mine = runs.filter((t) => t.policy === policy);
    assert.is(mine.length, 2, policy);
    assert.ok(
      mine.every((t) => t.messages.length > 2 && t.messages[2].role === 'assistant' && !t.crashed),
      policy,
    );
  }
});

test.run();
