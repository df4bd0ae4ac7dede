// grpo, sft and eval nodes placed on a host: the trainer worker runs in a
// container on the host's engine, from an image that carries the trainer
// environment (gpu/image/build-test.sh), while rollouts and their sandboxes
// stay here. This machine's engine stands in for the remote one, reached over
// TCP on loopback through a proxy to its socket, and the worker (on the
// host's network) is reached at the engine's address as on a real host.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import Docker from 'dockerode';
import { execa } from 'execa';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { exists } from '../../core/fs.js';
import {
  cli,
  cliStart,
  closedPort,
  nodeLogs,
  outputsOf,
  readJsonl,
  ROOT,
  tmpProject,
  waitFor,
  publishedSteps,
} from '../helpers.js';
import { engineProxy, startSshd } from './engines.js';

const docker = new Docker();
let image = '';
let proxy: Awaited<ReturnType<typeof engineProxy>>;
let port = 0;

test.before(async () => {
  // Built once and kept (labelled with the trainer lock's hash): later runs reuse it.
  image = (await execa('bash', [join(ROOT, 'gpu/image/build-test.sh')])).stdout.trim().split('\n').pop()!;
  proxy = await engineProxy();
  port = proxy.port;
});

test.after(async () => {
  proxy.cut();
  for (const c of await workerContainers())
    await docker
      .getContainer(c.Id)
      .remove({ force: true })
      .catch(() => {});
});

const workerContainers = () =>
  docker.listContainers({
    all: true,
    filters: { label: ['mlepipe.role=trainer-worker', `mlepipe.pid`], ancestor: [image] },
  });
const settings = () =>
  `cache: .mlepipe\nhosts:\n  box: { docker: "tcp://127.0.0.1:${port}", image: "${image}", labels: [cpu], gpus: 0 }\n`;

// One-line task descriptions: the tiny model's context is 1,024 tokens, and the ReAct prompt takes most of it.
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

const GRPO = (on: string, steps = 2) => `name: placed
models:
  tiny: { provider: worker, tiny: 0, model: tiny-qwen3, lora_rank: 8, max_tokens: 10 }
rewards:
  verbose: reply_chars / 40
stages:
  rl:
    uses: grpo
    ${on}
    with: { policy: tiny, trainer: worker, tasks: t, split: all, reward: verbose, steps: ${steps}, batch_size: 2, group_size: 3, max_turns: 1, lr: 0.01, seed: 3 }
`;

/** Steps published in the project's own cache. */
const finishedSteps = (dir: string) => publishedSteps(join(dir, '.mlepipe', 'items'));

const shape = (rows: Array<Record<string, unknown>>) => rows.map((r) => Object.keys(r).sort());
const manifestMetrics = async (out: string) =>
  Object.keys((JSON.parse(await readFile(join(out, 'manifest.json'), 'utf8')) as { metrics: object }).metrics).sort();

test('grpo with on: trains the tiny model in a container on the host: same shape as a local run, one key, cached on rerun', async () => {
  const here = await tmpProject({ ...TASKS, 'e.yaml': GRPO('') });
  const there = await tmpProject({ ...TASKS, 'e.yaml': GRPO('on: box') }, settings());
  const local = await cli(['run', 'e.yaml'], { cwd: here });
  assert.is(local.exitCode, 0, local.stderr);
  const placed = await cli(['run', 'e.yaml'], { cwd: there });
  assert.is(placed.exitCode, 0, placed.stderr);

  const log = await nodeLogs(there);
  assert.match(log, /trainer worker on host box: http:\/\/127\.0\.0\.1:\d+, serving tiny/);
  assert.match(log, /worker: mlepipe-worker listening on http:\/\/0\.0\.0\.0:\d+/);
  const [a, b] = [await outputsOf(here, 'rl'), await outputsOf(there, 'rl')];
  const [ca, cb] = [await readJsonl(join(a, 'metrics.jsonl')), await readJsonl(join(b, 'metrics.jsonl'))];
  assert.equal(
    cb.map((m) => m.step),
    [1, 2],
  );
  assert.equal(shape(cb), shape(ca));
  assert.equal(await manifestMetrics(b), await manifestMetrics(a));
  // The last step's checkpoint came back out of the container into the node's output.
  const state = JSON.parse(await readFile(join(b, 'checkpoint', 'state.json'), 'utf8'));
  assert.is(state.step, 2);
  assert.equal((await readdir(join(b, 'checkpoint'))).sort(), (await readdir(join(a, 'checkpoint'))).sort());

  const keys = async (dir: string) =>
    JSON.parse((await cli(['plan', 'e.yaml', '--json'], { cwd: dir })).stdout).nodes.map((n: { key: string }) => n.key);
  assert.equal(await keys(there), await keys(here));
  const again = await cli(['run', 'e.yaml'], { cwd: there });
  assert.is(again.exitCode, 0, again.stderr);
  assert.match(again.stderr, /1 cached, 0 to run/);
  assert.is((await workerContainers()).length, 0);
});

test('the worker container killed mid-training fails the node naming the host; nothing is cached, no container is left', async () => {
  const dir = await tmpProject({ ...TASKS, 'e.yaml': GRPO('on: box', 3) }, settings());
  const running = cliStart(['run', 'e.yaml'], { cwd: dir });
  await waitFor(async () => (await finishedSteps(dir)) >= 1, 600_000, 'the first step');
  const [c] = await docker.listContainers({
    filters: { label: ['mlepipe.role=trainer-worker', `mlepipe.pid=${running.pid}`] },
  });
  assert.ok(c, 'the worker container');
  await docker.getContainer(c.Id).kill();
  const r = await running.catch((e: { exitCode?: number; stderr?: string }) => e);
  assert.is(r.exitCode, 1, String(r.stderr));
  assert.match(
    String(r.stderr),
    /rl +failed: step [23]: host box: the trainer worker's container was killed \(exit 137\) during/,
  );
  const done = await finishedSteps(dir);
  assert.ok(done >= 1 && done < 3, `${done} steps finished`);
  assert.equal(await readdir(join(dir, '.mlepipe', 'nodes')).catch(() => []), []);
  assert.is((await workerContainers()).length, 0);

  // A rerun sends the last finished step's checkpoint up to a new container and goes on from it.
  const again = await cli(['run', 'e.yaml'], { cwd: dir });
  assert.is(again.exitCode, 0, again.stderr);
  const log = await nodeLogs(dir);
  assert.match(log, /step 1: finished by an earlier attempt/);
  assert.match(
    log,
    new RegExp(`trainer worker: resumed from \\S+/worker-checkpoints/step-0000${done} \\(worker step ${done}\\)`),
  );
  const curve = await readJsonl(join(await outputsOf(dir, 'rl'), 'metrics.jsonl'));
  assert.equal(
    curve.map((m) => m.step),
    [1, 2, 3],
  );
  assert.is((await workerContainers()).length, 0);
});

test('an engine lost while the worker trains fails the node naming the host; nothing is cached', async () => {
  const flaky = await engineProxy();
  const dir = await tmpProject(
    { ...TASKS, 'e.yaml': GRPO('on: flaky', 3) },
    settings() + `  flaky: { docker: "tcp://127.0.0.1:${flaky.port}", image: "${image}", gpus: 0 }\n`,
  );
  const running = cliStart(['run', 'e.yaml'], { cwd: dir });
  await waitFor(async () => (await finishedSteps(dir)) >= 1, 600_000, 'the first step');
  flaky.cut();
  const r = await running;
  assert.is(r.exitCode, 1, String(r.stderr));
  // The worker still answers (it is on the host's network), so training goes on until a checkpoint cannot be fetched.
  assert.match(
    String(r.stderr),
    /rl +failed: step [23]: host flaky: (lost the trainer worker's container: .* during fetching the checkpoint|could not fetch \/mlepipe\/ckpt\/step-0000[23])/,
  );
  assert.equal(await readdir(join(dir, '.mlepipe', 'nodes')).catch(() => []), []);
  // The engine itself never went away here: what the lost connection left running is removed by hand.
  for (const c of await docker.listContainers({
    all: true,
    filters: { label: ['mlepipe.role=trainer-worker', `mlepipe.pid=${running.pid}`] },
  }))
    await docker.getContainer(c.Id).remove({ force: true });
});

test('Ctrl-C while the worker trains on the host: the container goes, nothing is cached', async () => {
  const dir = await tmpProject({ ...TASKS, 'e.yaml': GRPO('on: box', 3) }, settings());
  const running = cliStart(['run', 'e.yaml'], { cwd: dir });
  await waitFor(
    async () =>
      (
        await docker.listContainers({
          filters: { label: ['mlepipe.role=trainer-worker', `mlepipe.pid=${running.pid}`] },
        })
      ).length === 1,
    600_000,
    'the worker container',
  );
  running.kill('SIGINT');
  const r = await running;
  assert.is(r.exitCode, 130, String(r.stderr));
  assert.equal(await readdir(join(dir, '.mlepipe', 'nodes')).catch(() => []), []);
  assert.is((await workerContainers()).length, 0);
});

test('GPUs the scheduler hands the node go to the container as device requests (this machine has none: it cannot start)', async () => {
  const gpuHost = `  gpu: { docker: "tcp://127.0.0.1:${port}", image: "${image}", labels: [h200], gpus: ["3"] }\n`;
  const dir = await tmpProject({ ...TASKS, 'e.yaml': GRPO('on: h200', 1) }, settings() + gpuHost);
  const r = await cli(['run', 'e.yaml'], { cwd: dir });
  assert.is(r.exitCode, 1, r.stderr);
  assert.match(r.stderr, /rl +failed: host gpu: could not start the trainer worker's container: .*gpu/);
  assert.is((await workerContainers()).length, 0);
});

const chat = (i: number) =>
  JSON.stringify({
    messages: [
      { role: 'user', content: `the grader reads the csv. task ${i}` },
      {
        role: 'assistant',
        content: `the model ${['trains on', 'reads', 'predicts'][i % 3]} the labels. the agent submits submission.csv.`,
      },
    ],
  });

test('sft with on: fine-tunes in the host container and brings the checkpoint back into the node', async () => {
  const files = { 'chat.jsonl': Array.from({ length: 8 }, (_, i) => chat(i)).join('\n') + '\n' };
  const yaml = (on: string) => `name: tune
models:
  base: { provider: worker, tiny: 0, model: tiny, lora_rank: 0 }
stages:
  tune:
    uses: sft
    ${on}
    with: { model: base, data: chat.jsonl, dedup: false, val_fraction: 0.25, seed: 1, epochs: 1, lr: 0.003, batch_size: 4, max_length: 128 }
`;
  // A second fine-tune starts from the first one's checkpoint, whose folder goes up into its container.
  const second = `  again:
    uses: sft
    needs: [tune]
    on: box
    with: { model: tuned, data: chat.jsonl, dedup: false, val_fraction: 0.25, seed: 1, epochs: 1, lr: 0.003, batch_size: 4, max_length: 128 }
`;
  const doc =
    yaml('on: cpu').replace('stages:', '  tuned: { provider: worker, checkpoint: tune, model: tuned }\nstages:') +
    second;
  const dir = await tmpProject({ ...files, 'e.yaml': doc }, settings());
  const r = await cli(['run', 'e.yaml'], { cwd: dir });
  assert.is(r.exitCode, 0, r.stderr);
  const out = await outputsOf(dir, 'tune');
  assert.ok(await exists(join(out, 'checkpoint', 'state.json')), 'the checkpoint came back');
  assert.not.ok(await exists(join(out, 'checkpoint', 'optimizer.pt')));
  const m = JSON.parse(await readFile(join(out, 'manifest.json'), 'utf8')).metrics;
  assert.is(m.steps, 2);
  assert.is(typeof m.val_loss, 'number');
  assert.match(await nodeLogs(dir), /trainer worker on host box/);
  const next = JSON.parse(await readFile(join(await outputsOf(dir, 'again'), 'manifest.json'), 'utf8')).metrics;
  // It started where the first ended: on the same validation split, its loss before training is the first one's after.
  assert.ok(Math.abs(next.val_loss_before - m.val_loss) < 1e-3, `${next.val_loss_before} against ${m.val_loss}`);
  assert.ok(next.val_loss_before < m.val_loss_before);
  assert.is((await workerContainers()).length, 0);
});

test("an eval node on an ssh:// host: its worker listens on the host's loopback only, is reached through the SSH connection, and the rollouts run here", async () => {
  const sshd = await startSshd(await closedPort());
  try {
    const hosts = `  far: { docker: "${sshd.address}", identity: "${sshd.identity}", known_hosts: "${sshd.knownHosts}", image: "${image}", gpus: 0 }\n`;
    const doc = `name: far
models:
  tiny: { provider: worker, tiny: 0, model: tiny-qwen3, lora_rank: 8, max_tokens: 8 }
stages:
  check: { uses: eval, on: far, with: { policy: tiny, tasks: t, split: all, max_turns: 1, seed: 2 } }
`;
    const dir = await tmpProject({ ...TASKS, 'e.yaml': doc }, settings() + hosts);
    const r = await cli(['run', 'e.yaml'], { cwd: dir });
    assert.is(r.exitCode, 0, `${r.stderr}\n${sshd.log()}`);
    const log = await nodeLogs(dir);
    const m =
      /listening on port (\d+) of the host's loopback, reached through the SSH connection at http:\/\/127\.0\.0\.1:(\d+)/.exec(
        log,
      );
    assert.ok(m, log.slice(-2000));
    // The port here is the tunnel's own, not the worker's.
    assert.is.not(m![1], m![2]);
    const runs = await readJsonl(join(await outputsOf(dir, 'check'), 'trajectories.jsonl'));
    assert.equal(runs.map((t) => t.task_id).sort(), ['alpha', 'beta']);
    for (const t of runs)
      assert.ok(
        t.messages.some((x: { role: string; content: string }) => x.role === 'assistant' && x.content.length > 0),
        JSON.stringify(t).slice(0, 300),
      );
    assert.is((await workerContainers()).length, 0);
  } finally {
    await sshd.dispose();
  }
});

test('on: is refused for a grpo node that starts no worker, and an eval node with no worker policy, at its position', async () => {
  const doc =
    GRPO('on: box').replace('trainer: worker', 'trainer: template').replace('policy: tiny', 'policy: template') +
    '  ev: { uses: eval, on: box, with: { policy: scripted:random, tasks: t, split: all } }\n';
  const dir = await tmpProject({ ...TASKS, 'e.yaml': doc }, settings());
  const r = await cli(['validate', 'e.yaml'], { cwd: dir });
  assert.is(r.exitCode, 2, r.stderr);
  assert.match(r.stderr, /e\.yaml:9:\d+: stages\.rl\.on: on: places the trainer worker a grpo node starts/);
  assert.match(
    r.stderr,
    /e\.yaml:11:\d+: stages\.ev\.on: on: places the trainer workers an eval node starts for its provider: worker policies, and this one has none/,
  );
});

test.run();
