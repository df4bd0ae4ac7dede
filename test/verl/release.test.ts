// The verl export in the released SandMLE code's format (prompt_format:
// sandmle-release): the export's rows carry the release's prompt and its
// sandbox.json the protocol (the ReAct scaffold in the release's format, its
// limits, last-scored and the release's format rule), so the sandbox service
// serving it runs the TypeScript scaffold itself (/react/open, /react/reply).
// verl's agent loop, built from the export's agent_loop.yaml on a rollout
// server of scripted exact tokens, runs episodes against that service; each
// one's turns, observations, reward variables, reward and mask equal what
// mlepipe's own grpo rollouts and batch (timeout_rule: release, drop-after)
// give the same replies: a python call with a hallucinated tool response, a
// Score call, an answer in the same reply as a call (an unknown ending), one
// timeout in three tool responses (more than a fifth), and a run that never
// scores (its final file is rewarded). A failed model call ends an episode
// as a policy error; once pruning hides turns, a step still carries the
// whole transcript the loop's token record continues.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execa } from 'execa';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import type { Policy } from '../../agents/policies/types.js';
import { timedOutUnder } from '../../agents/grpo/advantages.js';
import { readTaskView } from '../../agents/scaffolds/public.js';
import { reactMessages } from '../../agents/scaffolds/react/prompt.js';
import { RELEASE_DEFAULTS } from '../../agents/scaffolds/react/release-options.js';
import type { Trajectory } from '../../agents/trajectory.js';
import { REWARD_PRESETS, rewardInputs } from '../../core/rewards/presets.js';
import { writeVerlExport, type ExportOptions } from '../../gpu/verl/export.js';
import { exportServing, startSandboxService, type SandboxService } from '../../gpu/verl/service.js';
import type { ReleaseConfig } from '../../gpu/verl/service-mlab.js';
import { createSandbox } from '../../sandbox/index.js';
import { buildBatch } from '../../stages/grpo/batch.js';
import { runRollouts } from '../../stages/grpo/rollouts.js';
import { importSandmleTask } from '../../tasks/importer.js';
import { ROOT } from '../helpers.js';

const PY = join(ROOT, '.venv', 'verl', 'bin', 'python');
const SYS_PY = '/usr/bin/python3';
const N = 16;
const sandbox = createSandbox({ backend: 'bwrap', warm: true, poolSize: 1 });
const INPUTS = rewardInputs('sandmle-release', {}, {});
const REWARD = REWARD_PRESETS['sandmle-release'];
// The release's limits (limits: release), but a two-second step so that a timeout is quick.
const LIMITS = { maxTurns: 15, stepS: 2, budgetS: 1200, contextTokens: 32_768, observationChars: 4000 };
let root = '';
let exportDir = '';
let service: SandboxService | undefined;

/** A release-shaped regression task: the evaluator prints the mean absolute error, lower is better. */
async function releaseTask(): Promise<void> {
  const pub = join(root, 'release', 'mae', 'prepared', 'public');
  await mkdir(pub, { recursive: true });
  const ids = [...Array(N).keys()];
  const files: Record<string, string> = {
    'description.md': '## Competition ID: mae\nPredict y for each id of test.csv.\n',
    'train.csv': `id,y\n${ids.map((i) => `${i},${i}`).join('\n')}\n`,
    'test.csv': `id\n${ids.join('\n')}\n`,
    'sample_submission.csv': `id,y\n${ids.map((i) => `${i},0`).join('\n')}\n`,
    'answer.csv': `id,y\n${ids.map((i) => `${i},${i}`).join('\n')}\n`,
    'evaluator.py': [
      'import argparse, json',
      'import pandas as pd',
      'a = argparse.ArgumentParser()',
      'a.add_argument("--submission_path")',
      'sub = pd.read_csv(a.parse_args().submission_path)',
      'ans = pd.read_csv("answer.csv")',
      'mae = float((sub["y"] - ans["y"]).abs().mean())',
      'print(json.dumps({"score": mae, "is_lower_better": True, "gold_threshold": 0.5, "silver_threshold": 1.0, "bronze_threshold": 2.0, "median_threshold": 4.0}))',
      '',
    ].join('\n'),
  };
  for (const [name, text] of Object.entries(files)) await writeFile(join(pub, name), text);
  const r = await importSandmleTask(join(root, 'release', 'mae'), join(root, 'tasks'), SYS_PY);
  assert.equal(r.problems, []);
}

const TRAINING = { lr: 1e-6, clipLow: 0.2, clipHigh: 0.28, kl: 0, temperature: 1, advantage: 'grpo' } as const;
const CLUSTER = { lossAggMode: 'token-mean', nodes: 1, gpusPerNode: 8, rollout: 'vllm' } as const;

const exportOptions = (): ExportOptions => ({
  model: join(root, 'no-model'),
  reward: REWARD,
  inputs: INPUTS,
  groupSize: 4,
  batchSize: 2,
  steps: 1,
  maxTurns: LIMITS.maxTurns,
  stepTimeoutS: LIMITS.stepS,
  timeBudgetS: LIMITS.budgetS,
  memoryMb: 2048,
  contextTokens: LIMITS.contextTokens,
  maskTimeouts: 'drop-after',
  timeoutRule: 'release',
  gpuMemoryGib: 80,
  ...TRAINING,
  ...CLUSTER,
  checkpointEvery: 0,
  evalEvery: 0,
  release: { observationChars: LIMITS.observationChars, options: { ...RELEASE_DEFAULTS, date: '2025-01-02' } },
});

test.before(async () => {
  root = await mkdtemp(join(tmpdir(), 'mlepipe-verl-release-'));
  await releaseTask();
  exportDir = join(root, 'verl');
  const task = { id: 'mae', dir: join(root, 'tasks', 'mae') };
  await writeVerlExport(exportDir, [task], [], exportOptions());
  service = await startSandboxService({
    ...(await exportServing(exportDir)),
    sandbox,
    python: SYS_PY,
    starter: async () => null,
  });
});

test.after(async () => {
  await service?.close();
  await sandbox.shutdown();
  await rm(root, { recursive: true, force: true });
});

/** Predictions off by `off` for every row: the mean absolute error is `off`. */
const write = (off: number) =>
  `import pandas as pd\ns = pd.read_csv("public/sample_submission.csv")\ns["y"] = s["id"] + ${off}\ns.to_csv("submission.csv", index=False)\nprint("written")`;
const code = (think: string, body: string) =>
  `<think>${think}</think>\n<tool_call>\npython\n<code>\n${body}\n</code>\n</tool_call>`;
const SCORE =
  '<think>grade it</think>\n<tool_call>\n{"name": "Score", "arguments": {"competition_id": "mae"}}\n</tool_call>';
const ANSWER = '<think>done</think>\n<answer>submission</answer>';
const SLEEP = code('slow', 'import time\ntime.sleep(30)');

const EPISODES = {
  // A Score call (silver, 1.0), then a worse file and an answer in the same reply as its call: the last grade is
  // rewarded, and the ending is one the release cannot name.
  unknown: [code('first model', write(1)), SCORE, `${code('a worse idea', write(3))}\n<answer>submission</answer>`],
  // One execution timeout in three tool responses: more than a fifth (gold, 0.0, last scored).
  timeout: [SLEEP, code('exact', write(0)), SCORE, ANSWER],
  // A hallucinated tool response after the call; never scored: the final file (3.0: within the median's 4.0 only)
  // is rewarded.
  unscored: [`${code('rough', write(3))}\n<tool_response>\nwritten, and the score is 0.0\n</tool_response>`, ANSWER],
};
type Name = keyof typeof EPISODES;

/** The policy of mlepipe's own rollouts: the scripted replies, one a turn. */
function replay(replies: string[]): Policy {
  const usage = { prompt_tokens: 1, completion_tokens: 1 };
  return { name: 'replay', kind: 'scripted', act: async ({ turn }) => ({ text: replies[turn], usage }) };
}

/** mlepipe's own grpo rollouts of the same replies, and the mask its batch gives each under the release's rules. */
async function own(): Promise<Record<Name, { traj: Trajectory; masked: string | null }>> {
  const rollouts: Parameters<typeof buildBatch>[1][number][] = [];
  for (const [name, replies] of Object.entries(EPISODES)) {
    const [r] = await runRollouts(
      {
        sandbox,
        policy: replay(replies),
        tasks: [{ id: 'mae', dir: join(root, 'tasks', 'mae') }],
        group: 1,
        groupPrefix: name,
        limits: {
          maxTurns: LIMITS.maxTurns,
          stepTimeoutMs: LIMITS.stepS * 1000,
          timeBudgetMs: LIMITS.budgetS * 1000,
          contextTokens: LIMITS.contextTokens,
          observationChars: LIMITS.observationChars,
        },
        memoryMb: 2048,
        promptFormat: 'sandmle-release',
        python: SYS_PY,
        seed: 0,
        concurrency: 1,
        signal: new AbortController().signal,
        reward: REWARD,
        inputs: INPUTS,
      },
      () => {},
    );
    rollouts.push({ ...r, group_id: 'step1/0/mae', sample: rollouts.length });
  }
  const batch = buildBatch(1, rollouts, {
    advantage: 'grpo',
    std: 'unbiased',
    groupSize: rollouts.length,
    hyper: { lr: 1, clip_low: 0.2, clip_high: 0.28, kl: 0, temperature: 1 },
    maskTimeouts: 'drop-after',
    timeoutRule: 'release',
    maxTurns: LIMITS.maxTurns,
  });
  const names = Object.keys(EPISODES) as Name[];
  return Object.fromEntries(
    names.map((n, i) => [n, { traj: rollouts[i] as Trajectory, masked: batch.trajectories[i].mask_reason ?? null }]),
  ) as Record<Name, { traj: Trajectory; masked: string | null }>;
}

interface Driven {
  turns: [string, string | null][];
  ended: string;
  reward: number;
  variables: Record<string, number>;
  timed_out: boolean;
  unknown_ending: boolean;
  masked: boolean;
  observations: string[];
  record_replies: string[];
  observations_in_record: string[];
  prompt_is_first_transcript: boolean;
}

/** verl's agent loop of the export (mlepipe_react, scaffold: react-release) on the replies, against the service. */
async function drive(replies: string[]): Promise<Driven> {
  const r = await execa(
    PY,
    [join(ROOT, 'test', 'verl', 'drive_mlab.py'), exportDir, 'mae', JSON.stringify(replies), 'mlepipe_react'],
    { env: { MLEPIPE_SANDBOX_URL: service!.url }, reject: false },
  );
  assert.is(r.exitCode, 0, r.stderr.slice(-3000));
  return JSON.parse(r.stdout.trim().split('\n').pop()!) as Driven;
}

/** Observations with their run times taken out. */
const steady = (obs: string[]) => obs.map((o) => o.replace(/\d+(\.\d+)?\s?m?s\b/g, 'T'));
const round = (x: number) => Number(x.toFixed(6));

test("the export's rows carry the release's prompt; sandbox.json and agent_loop.yaml record the protocol", async () => {
  const { parquetReadObjects } = await import('hyparquet');
  const buf = await readFile(join(exportDir, 'data', 'train.parquet'));
  const rows = (await parquetReadObjects({
    file: buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength),
  })) as Array<{ agent_name: string; prompt: { role: string; content: string }[] }>;
  const view = await readTaskView(join(root, 'tasks', 'mae'), 'mae');
  const release = { options: { ...RELEASE_DEFAULTS, date: '2025-01-02' }, datasetDir: '/workspace/public' };
  assert.equal(rows[0].prompt, reactMessages(view, { maxTurns: LIMITS.maxTurns, stepSeconds: LIMITS.stepS }, release));
  assert.is(rows[0].agent_name, 'mlepipe_react');
  const spec = JSON.parse(await readFile(join(exportDir, 'sandbox.json'), 'utf8')) as Record<string, unknown>;
  assert.equal(spec.inputs, { submission: 'last-scored', format_rule: 'release', thresholds: 'release' });
  assert.equal(spec.scaffold, {
    name: 'react',
    prompt_format: 'sandmle-release',
    max_turns: 15,
    step_timeout_s: 2,
    time_budget_s: 1200,
    context_tokens: 32_768,
    observation_chars: 4000,
    // The release's switches reach the service's scaffold through the export.
    release: { ...RELEASE_DEFAULTS, date: '2025-01-02' },
  });
  const loop = (parse(await readFile(join(exportDir, 'agent_loop.yaml'), 'utf8')) as Record<string, unknown>[])[0];
  assert.equal(
    [loop.scaffold, loop.timeout_rule, loop.mask_timeouts, loop.max_turns],
    ['react-release', 'release', 'drop-after', 15],
  );
});

test("verl's agent loop takes mlepipe's turns and observations, and its reward and mask equal mlepipe's trainer's", async () => {
  const ref = await own();
  // The cases are what they claim, by mlepipe's own figures.
  assert.equal([ref.unknown.masked, ref.timeout.masked, ref.unscored.masked], ['unknown', 'timed_out', null]);
  assert.equal(ref.unknown.traj.rewarded, { submission: 'last-scored', turn: 1 });
  assert.equal(ref.timeout.traj.rewarded, { submission: 'last-scored', turn: 2 });
  assert.is(ref.unscored.traj.rewarded, undefined);
  for (const name of Object.keys(EPISODES) as Name[]) {
    const got = await drive(EPISODES[name]);
    const want = ref[name].traj;
    assert.ok(got.prompt_is_first_transcript, `${name}: the record starts at the service's prompt`);
    assert.equal(
      got.turns.map((t) => t[0]),
      want.turns.map((t) => t.action),
      name,
    );
    assert.is(got.ended, want.ended, name);
    assert.equal(steady(got.observations), steady(want.turns.map((t) => t.observation)), name);
    if (name !== 'unscored') assert.match(got.observations.at(-2)!, /^Submission OK\. Details: \{"score_primary/);
    // A masked trajectory's replies leave the loss: none of its tokens keeps mask 1.
    // The cut reply is what the next prompt holds, the whole one what the record holds: the record ends there.
    const trained = ref[name].masked !== null ? [] : name === 'unscored' ? EPISODES[name].slice(0, 1) : EPISODES[name];
    assert.equal(got.record_replies, trained, `${name}: the replies are the record's sampled tokens`);
    assert.is(round(got.reward), round(want.reward!), `${name}: reward`);
    for (const k of ['format', 'execute', 'median', 'bronze', 'silver', 'gold', 'score', 'turns'] as const)
      assert.is(round(got.variables[k]), round(want.variables[k]), `${name}: ${k}`);
    assert.is(got.masked, ref[name].masked !== null, `${name}: masked`);
    assert.is(got.timed_out, ref[name].masked === 'timed_out', `${name}: timed out`);
    assert.is(got.unknown_ending, ref[name].masked === 'unknown', `${name}: unknown ending`);
  }
  // Worked by hand: silver 0.1 + 0.2 + 0.6; gold 0.1 + 0.2 + 0.7; the final 3.0 beats only the median: 0.1 + 0.2 + 0.1.
  assert.equal(
    [ref.unknown.traj.reward, ref.timeout.traj.reward, ref.unscored.traj.reward].map((x) => round(x!)),
    [0.9, 1, 0.4],
  );
});

test('the hallucinated tool response is sampled, never observed: the observation is the real run, wrapped', async () => {
  const got = await drive(EPISODES.unscored);
  assert.ok(got.record_replies[0].includes('the score is 0.0'));
  const first = got.observations_in_record.find((o) => o.includes('<tool_response>'))!;
  assert.match(first, /written/);
  assert.not.match(first, /the score is/);
});

test('a failed model call ends the episode as a policy error, which the release counts as a timeout', async () => {
  const post = async (path: string, body: unknown) =>
    (await (await fetch(service!.url + path, { method: 'POST', body: JSON.stringify(body) })).json()) as Record<
      string,
      unknown
    >;
  assert.match(
    String((await post('/open', { task: 'mae' })).error),
    /runs the react scaffold: open episodes with \/react\/open/,
  );
  assert.match(String((await post('/mlab/open', { task: 'mae' })).error), /use \/react\/open/);
  const opened = await post('/react/open', { task: 'mae' });
  const ended = (await post('/react/reply', { session: opened.session, error: 'the rollout server is gone' })) as {
    done: Trajectory;
  };
  assert.equal([ended.done.ended, ended.done.error], ['policy_error', 'the rollout server is gone']);
  assert.ok(timedOutUnder('release', ended.done));
  await post('/close', { session: opened.session });
});

test("once pruning hides turns, a step still hands the loop the whole transcript (its token record's continuation)", async () => {
  const serving = await exportServing(exportDir);
  // A context budget of one token: every turn but the latest is hidden from the policy.
  const tight = await startSandboxService({
    ...serving,
    scaffold: { ...(serving.scaffold as ReleaseConfig), context_tokens: 1 },
    sandbox,
    python: SYS_PY,
    starter: async () => null,
  });
  try {
    const post = async (path: string, body: unknown) =>
      (await (await fetch(tight.url + path, { method: 'POST', body: JSON.stringify(body) })).json()) as {
        session: string;
        request: { messages: unknown[]; transcript: { content: string }[] };
      };
    const { session } = await post('/react/open', { task: 'mae' });
    await post('/react/reply', { session, text: code('one', 'print("first")') });
    const third = await post('/react/reply', { session, text: code('two', 'print("second")') });
    assert.is(third.request.messages.length, 2 + 2);
    assert.is(third.request.transcript.length, 2 + 4);
    assert.match(third.request.transcript[3].content, /first/);
    await post('/close', { session });
  } finally {
    await tight.close();
  }
});

test.run();
