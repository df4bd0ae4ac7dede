// The verl export against the pinned verl in .venv/verl (scripts/setup-python.sh verl):
// (a) Hydra composes verl's trainer config with the exported overrides as
//     main_ppo does and verl's own checks pass;
// (b) the exported agent loop, built as verl's agent-loop workers build it,
//     runs the ReAct scaffold on two tasks against the replay server, executing
//     code through `mlepipe sandbox serve`, within its turn and timeout limits,
//     and the exported reward function scores each trajectory exactly as
//     mlepipe's own eval scores the same replies;
// (c) a local Ray head runs the agent loop and the reward function as Ray tasks.
import { randomBytes } from 'node:crypto';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { waitAtMost } from '../../core/proc.js';
import { stringify, parse } from 'yaml';
import { startReplayServer, type ReplayServer } from '../llm/replay-server.js';
import { ownPorts } from '../../gpu/verl/job.js';
import {
  ROOT,
  cli,
  cliStart,
  closedPort,
  outputsOf,
  readJsonl,
  tmpProject,
  waitFor,
  shareTaskNodes,
} from '../helpers.js';

// The generated tasks come from another test file that built the same key, when one did (test/shared-tasks.ts).
shareTaskNodes();

const PY = join(ROOT, '.venv', 'verl', 'bin', 'python');
const doc0 = (text: string) => (parse(text) as { overrides: string[] }).overrides;
const DRIVE = join(ROOT, 'test', 'verl', 'drive.py');
const CHECKS = join(ROOT, 'test', 'verl', 'checks.py');
const REWARD = '0.1*format + 0.3*execute + 0.1*median + 0.2*bronze + 0.2*silver + 0.1*gold';

const EXP = (url: string) => `name: verl
models:
  tiny: { provider: openai, base_url: "${url}", model: tiny-coder, path: Qwen/Qwen3-0.6B, api_key_env: TINY_KEY, timeout_s: 30 }
rewards:
  dense: "${REWARD}"
stages:
  tasks: { uses: generate, with: { seeds: mlebench-tabular, count: 3, samples: [50, 80], seed: 1 } }
  verified: { uses: filter, needs: [tasks], with: { val: 0 } }
  rl: { uses: grpo, needs: [verified], with: { policy: tiny, trainer: verl-export, reward: dense, steps: 3, batch_size: 2, group_size: 4, max_turns: 3, step_timeout: 2, verl: { gpus_per_node: 8 } } }
  own: { uses: eval, needs: [verified], with: { policies: [tiny], max_turns: 3, step_timeout: 2, time_budget: 600, reward: dense } }
`;

const SOLVE = [
  '<think>The sample submission has the right shape.</think>\n```python\nimport pandas as pd\npd.read_csv("public/sample_submission.csv").to_csv("submission.csv", index=False)\nprint("copied")\n```',
  '<think>Done.</think>\n<answer>submission.csv</answer>',
];
// Never answers: a reply without an action, then code that outlives the step timeout, then a crash.
const STALL = [
  'I will think about it.',
  '<think>Wait.</think>\n```python\nimport time\ntime.sleep(60)\n```',
  '<think>Fail.</think>\n```python\nraise SystemExit(3)\n```',
];

/** The replay server's model: the first task's episodes solve it, the others stall; the turn is read from the conversation. */
const model = (solveMarker: string) => (body: { messages: { role: string; content: string }[] }) => {
  const turn = body.messages.filter((m) => m.role === 'assistant').length;
  const script = body.messages[1].content.includes(solveMarker) ? SOLVE : STALL;
  return { content: script[Math.min(turn, script.length - 1)] };
};

interface Shared {
  dir: string;
  verl: string;
  tasks: string[];
  server: ReplayServer;
}
let shared: Shared | undefined;

/** One export, made once: a generate → filter → grpo (verl-export) run and an eval of the same replies. */
async function setup(): Promise<Shared> {
  if (shared) return shared;
  // The description that tells the tasks apart is only known once they exist: the marker is filled in below.
  let marker = '\u0000';
  const server = await startReplayServer([(b) => model(marker)(b)]);
  const dir = await tmpProject({ 'e.yaml': EXP(server.url) });
  const r0 = await cli(['run', 'e.yaml', '--only', 'rl'], { cwd: dir, env: { TINY_KEY: 'sk-test' } });
  assert.is(r0.exitCode, 0, r0.stderr);
  const verl = join(await outputsOf(dir, 'rl'), 'verl');
  const { parquetReadObjects } = await import('hyparquet');
  const buf = await readFile(join(verl, 'data', 'train.parquet'));
  const rows = (await parquetReadObjects({
    file: buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength),
  })) as Array<{ prompt: { content: string }[]; extra_info: { task_id: string } }>;
  marker = rows[0].prompt[1].content;
  shared = { dir, verl, tasks: rows.map((r) => r.extra_info.task_id), server };
  return shared;
}

/** `mlepipe sandbox serve --export DIR` in the background until stop(). */
async function serve(verl: string, cwd: string) {
  const p = cliStart(['sandbox', 'serve', '--export', verl], { cwd });
  let out = '';
  p.stdout?.on('data', (c) => (out += c));
  await waitFor(() => /listening on (http\S+)/.test(out), 60_000, 'the sandbox service to listen');
  return {
    url: /listening on (http\S+)/.exec(out)![1],
    stop: async () => {
      p.kill('SIGTERM');
      await p.catch(() => {});
    },
  };
}

test('(a) verl composes its trainer config with the exported overrides and its own checks pass', async () => {
  const { verl } = await setup();
  const overrides = doc0(await readFile(join(verl, 'trainer_overrides.yaml'), 'utf8'));
  const variant = async (name: string, list: string[]) => {
    const file = join(await mkdtemp(join(tmpdir(), `verl-${name}-`)), 'overrides.yaml');
    await writeFile(file, stringify({ overrides: list }));
    return file;
  };
  // A budget below one trajectory fails the check, as verl's micro-batching would fail at the first update.
  const small = await variant('budget', [
    ...overrides.filter((o) => !o.startsWith('actor_rollout_ref.actor.ppo_max_token_len_per_gpu')),
    'actor_rollout_ref.actor.ppo_max_token_len_per_gpu=4096',
  ]);
  // Without the export's tensor parallelism, verl's default of 2 leaves one GPU no replica: the check fails as the launch would.
  const oneGpu = await variant('1gpu', [
    ...overrides.filter((o) => !/tensor_model_parallel_size|n_gpus_per_node|ppo_mini_batch|train_batch_size/.test(o)),
    'trainer.n_gpus_per_node=1',
    'data.train_batch_size=1',
    'actor_rollout_ref.actor.ppo_mini_batch_size=1',
  ]);
  // The same check fails without what the old export lacked: verl's checks are really applied.
  const old = await variant(
    'old',
    overrides.filter(
      (o) =>
        !o.startsWith('actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu') &&
        !o.startsWith('actor_rollout_ref.actor.use_dynamic_bsz'),
    ),
  );
  // The export's own overrides and the three failing variants in one interpreter (test/verl/checks.py: each as
  // `python -m mlepipe_verl.check FILE` would end; test/verl/mlab.test.ts runs that command as such):
  // importing verl is most of a check's time.
  const many = await execa(PY, [CHECKS, 'trainer_overrides.yaml', small, oneGpu, old], { cwd: verl, reject: false });
  assert.is(many.exitCode, 0, many.stderr.slice(-3000));
  const [ok, tight, none, bad] = many.stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { exit_code: number; stdout: string; stderr: string });
  assert.is(ok.exit_code, 0, ok.stderr.slice(-3000));
  const got = JSON.parse(ok.stdout.trim().split('\n').pop()!);
  assert.equal(
    [got.rollout, got.mode, got.agent_loops, got.train_batch_size, got.n, got.ppo_mini_batch_size],
    ['vllm', 'async', ['mlepipe_react'], 2, 4, 2],
  );
  assert.ok(got.prompt_length + got.response_length <= 32_768);
  // Every save carries the Hugging Face weights the node hands on; verl keeps keep_checkpoints (2) + 1.
  assert.equal([got.save_contents, got.max_actor_ckpt_to_keep], [['model', 'optimizer', 'extra', 'hf_model'], 3]);
  // The layout for the model's shape: dynamic batches whose token budget holds a whole trajectory, as verl composed it.
  assert.equal([got.layout.sp, got.layout.offload, got.use_dynamic_bsz], [1, false, true]);
  assert.ok(
    got.ppo_max_token_len_per_gpu * got.ulysses >= got.prompt_length + got.response_length,
    JSON.stringify(got),
  );
  assert.type(got.layout.estimate.training, 'number');
  assert.is(tight.exit_code, 1, tight.stdout);
  assert.match(tight.stderr, 'token budget');
  // One rollout replica per GPU, counted as verl's server manager counts them.
  assert.equal([got.rollout_tp, got.rollout_replicas], [1, 8]);
  assert.is(none.exit_code, 1, none.stderr.slice(-2000));
  assert.match(none.stderr, 'no rollout replica');
  // verl's own check raises: exit 1 for an uncaught exception, with verl's message.
  assert.is(bad.exit_code, 1, bad.stderr.slice(-2000));
  assert.match(bad.stderr, 'ppo_micro_batch_size');
});

test("(b) the agent loop runs two tasks through the sandbox service within its limits; its reward equals mlepipe eval's", async () => {
  const { dir, verl, tasks, server } = await setup();
  const svc = await serve(verl, dir);
  try {
    const tok = await mkdtemp(join(tmpdir(), 'verl-tok-'));
    const r = await execa(PY, [DRIVE, verl, tok, tasks[0], tasks[1]], {
      env: { MLEPIPE_SANDBOX_URL: svc.url, MLEPIPE_CHAT_URL: server.url },
      reject: false,
    });
    assert.is(r.exitCode, 0, r.stderr.slice(-3000));
    const [solved, stalled] = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    assert.equal(
      solved.turns.map((t: { action: string }) => t.action),
      ['code', 'answer'],
    );
    assert.equal(
      [solved.ended, solved.turns[0].exit_code, solved.variables.execute, solved.timed_out],
      ['answer', 0, 1, false],
    );
    // Three turns and no more (max_turns: 3); the sleeping step was stopped at step_timeout: 2.
    assert.equal(
      stalled.turns.map((t: { action: string }) => t.action),
      ['invalid', 'code', 'code'],
    );
    assert.equal(
      [stalled.ended, stalled.turns[1].timed_out, stalled.turns[2].exit_code, stalled.timed_out],
      ['max_turns', true, 3, true],
    );
    // Timed out: its reply tokens leave the loss; the solved episode keeps them.
    assert.is(stalled.mask_ones, 0);
    assert.ok(solved.mask_ones > 0 && solved.response_ids > solved.mask_ones);
    assert.is((await fetch(`${svc.url}/health`).then((x) => x.json())).sessions, 0);
    // Tasks are named by id only: a path never opens a session.
    const bad = await fetch(`${svc.url}/open`, { method: 'POST', body: JSON.stringify({ task: `../${tasks[0]}` }) });
    assert.is(bad.status, 400);
    // mlepipe's own eval of the same replies on the same tasks.
    const e = await cli(['run', 'e.yaml', '--only', 'own'], { cwd: dir, env: { TINY_KEY: 'sk-test' } });
    assert.is(e.exitCode, 0, e.stderr);
    const own = await readJsonl(join(await outputsOf(dir, 'own'), 'trajectories.jsonl'));
    for (const ep of [solved, stalled]) {
      const t = own.find((x) => x.task_id === ep.task_id);
      assert.ok(t, ep.task_id);
      assert.equal(
        t.turns.map((x: { action: string }) => x.action),
        ep.turns.map((x: { action: string }) => x.action),
      );
      assert.is(ep.reward, t.reward);
      for (const k of ['format', 'execute', 'median', 'bronze', 'turns', 'timed_out'])
        assert.is(ep.variables[k], t.variables[k], `${ep.task_id} ${k}`);
    }
    assert.ok(solved.reward > stalled.reward);
  } finally {
    await svc.stop();
  }
});

test('(c) a local Ray head runs the agent loop and the reward function as Ray tasks', async () => {
  const { dir, verl, tasks, server } = await setup();
  const temp = await mkdtemp(join('/tmp', 'ray-'));
  // Token authentication with a token of the test's own, as mlepipe's heads have (gpu/verl/job.ts): a
  // ~/.ray/auth_token that a local ray.init() once wrote would otherwise turn it on with a token the driver lacks.
  const auth = { RAY_AUTH_MODE: 'token', RAY_AUTH_TOKEN: randomBytes(32).toString('hex') };
  const { head } = await startHead(temp, auth);
  let log = '';
  head.stdout?.on('data', (c) => (log += c));
  head.stderr?.on('data', (c) => (log += c));
  const svc = await serve(verl, dir);
  try {
    await waitFor(
      () => {
        // A head that gave up says why at once, instead of a wait that runs out.
        if (head.exitCode !== null) throw new Error(`ray start exited (${head.exitCode}):\n${log.slice(-3000)}`);
        return /ray\.init\(address='?([^'\s)]+)/.test(log) || /--address='?([\d.:]+)/.test(log);
      },
      120_000,
      'the Ray head',
    );
    const address = (/--address='?([\d.:]+)/.exec(log) ?? /ray\.init\(address='?([^'\s)]+)/.exec(log))![1];
    const tok = await mkdtemp(join(tmpdir(), 'verl-tok-'));
    const r = await execa(PY, [DRIVE, verl, tok, ...tasks, '--ray', address], {
      env: { MLEPIPE_SANDBOX_URL: svc.url, MLEPIPE_CHAT_URL: server.url, ...auth },
      reject: false,
      // Above the driver's own wait for its Ray tasks, so that its error is what a stuck run shows.
      timeout: 420_000,
      forceKillAfterDelay: 5_000,
    });
    assert.is(r.exitCode, 0, `${r.stderr.slice(-3000)}\n${await rayLogs(temp)}`);
    const out = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    assert.is(out.length, tasks.length);
    for (const o of out) {
      assert.is.not(o.pid, o.driver_pid);
      // The job's upload leaves the tasks (and their answers) out.
      assert.is(o.worker_saw_tasks, false);
    }
    assert.equal(
      out.map((o) => o.ended),
      tasks.map((_, i) => (i === 0 ? 'answer' : 'max_turns')),
    );
    assert.ok(out[0].reward > out[1].reward);
  } finally {
    await svc.stop();
    head.kill('SIGTERM');
    // Bounded: a head killed before it stopped its own processes leaves them holding its output pipes.
    await waitAtMost(head, 60_000);
    await rm(temp, { recursive: true, force: true });
  }
});

/** `ray start --head --block` on its own ports, in the foreground. */
async function startHead(temp: string, auth: Record<string, string>) {
  const ray = join(ROOT, '.venv', 'verl', 'bin', 'ray');
  // --block keeps the head in this process group's child; stopping it stops what it started.
  const head = execa(
    ray,
    [
      'start',
      '--head',
      '--block',
      '--num-cpus',
      '2',
      '--node-ip-address',
      '127.0.0.1',
      '--port',
      String(await closedPort()),
      '--temp-dir',
      temp,
      '--include-dashboard',
      'false',
      ...(await ownPorts()).args,
      '--disable-usage-stats',
    ],
    {
      reject: false,
      // Time for `ray start` to stop the processes it started, under load, before it is killed.
      forceKillAfterDelay: 30_000,
      env: { RAY_USAGE_STATS_ENABLED: '0', ...auth },
    },
  );
  // In an object: a subprocess is a promise, and returning it would wait for the head to end.
  return { head };
}

/** The tails of the Ray session's worker and raylet logs: why a task never ran, when one did not. */
async function rayLogs(temp: string): Promise<string> {
  const dir = join(temp, 'session_latest', 'logs');
  const names = await readdir(dir).catch(() => [] as string[]);
  const picked = names
    .filter((n) => /^(raylet\.(out|err)|worker-.*\.err|python-core-worker-.*\.log)$/.test(n))
    .slice(0, 6);
  const tails = await Promise.all(
    picked.map(async (n) => `--- ${n}\n${(await readFile(join(dir, n), 'utf8').catch(() => '')).slice(-1500)}`),
  );
  return tails.join('\n');
}

test.after(async () => {
  await shared?.server.close();
});

test.run();
