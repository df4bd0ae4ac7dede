// The released SandMLE code's rules, replayed: the same scripted replies on a
// release-shaped task (imported as the release ships it: its evaluator reads
// test.csv and answer.csv by relative path and prints indented JSON with
// string numbers), through the rollouts of eval and grpo (grpo's runRollouts
// and buildBatch) and through the verl export's reward function. Every
// expected figure is worked by hand from deepresearch_workflow.py and
// deepresearch_agent.py; each case also shows mlepipe's default figure.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execa } from 'execa';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Trajectory } from '../../agents/trajectory.js';
import { assetPath } from '../../core/assets.js';
import { REWARD_PRESETS, rewardInputs } from '../../core/rewards/presets.js';
import { startSandboxService } from '../../gpu/verl/service.js';
import { createSandbox } from '../../sandbox/index.js';
import { parseEvaluatorOutput } from '../../sandbox/evaluate.js';
import { buildBatch } from '../../stages/grpo/batch.js';
import {
  ANSWER,
  code,
  DEFAULT,
  grpoRollout,
  LIMITS,
  PY,
  RELEASE,
  releaseTask,
  round,
  runOn,
  score,
  write,
} from './release-fixture.js';

let root = '';
const tasks: Record<'cactus' | 'nogold', string> = { cactus: '', nogold: '' };
const sandbox = createSandbox({ backend: 'bwrap', warm: true, poolSize: 1 });

const evaluator = (gold: string) => `import argparse, json
import pandas as pd
p = argparse.ArgumentParser()
p.add_argument("--submission_path")
a = p.parse_args()
test = pd.read_csv("test.csv")
ans = pd.read_csv("answer.csv")
sub = pd.read_csv(a.submission_path)
assert len(sub) == len(test), "wrong length"
acc = float((sub["label"].values == ans["label"].values).mean())
out = {"score": str(acc), "is_lower_better": "false", "gold_threshold": ${gold}, "silver_threshold": 0.9, "bronze_threshold": "0.85", "median_threshold": 0.5}
print("  " + json.dumps(out, indent=2))
`;

test.before(async () => {
  root = await mkdtemp(join(tmpdir(), 'mlepipe-release-rules-'));
  tasks.cactus = await releaseTask(root, 'cactus', evaluator('0.95'));
  tasks.nogold = await releaseTask(root, 'nogold', evaluator('None'));
});

test.after(async () => {
  await sandbox.shutdown();
  await rm(root, { recursive: true, force: true });
});

const run = (replies: string[], task: keyof typeof tasks, how: typeof RELEASE): Promise<Trajectory> =>
  runOn(sandbox, { id: task, dir: tasks[task] }, replies, how);

test('6: the release task imports as it is and grades: test.csv by relative path, indented JSON, string numbers, "false"', async () => {
  const t = await run([code('write', write(17)), ANSWER], 'cactus', DEFAULT);
  assert.equal(t.evaluation, {
    score: 0.85,
    gold_threshold: 0.95,
    silver_threshold: 0.9,
    bronze_threshold: 0.85,
    median_threshold: 0.5,
    is_lower_better: false,
  });
  // The answers stayed out of the agent's view.
  assert.ok(!(await execa('ls', [join(tasks.cactus, 'public')])).stdout.includes('answer.csv'));
  const indented = '  {\n  "score": "0.85",\n  "is_lower_better": "false"\n}';
  assert.is(parseEvaluatorOutput(indented, '', 0, 'release').ok, true);
  assert.is(parseEvaluatorOutput(indented, '', 0).ok, false);
  // A log line before the object: the release's whole-stdout read refuses it, mlepipe's takes the object.
  const logged =
    'loading\n{"score": 0.5, "is_lower_better": 0, "gold_threshold": 1, "silver_threshold": 0.9, "bronze_threshold": 0.8, "median_threshold": 0.5}';
  assert.is(parseEvaluatorOutput(logged, '', 0, 'release').ok, false);
  assert.is(parseEvaluatorOutput(logged, '', 0).ok, true);
  // Lenient casts: is_lower_better 1 or "yes" is lower, null or "nope" higher; an uncastable threshold is null.
  const grade = (lower: string) =>
    parseEvaluatorOutput(`{"score": "2", "is_lower_better": ${lower}, "gold_threshold": "x"}`, '', 0, 'release');
  assert.equal(
    [grade('1'), grade('"yes"'), grade('null'), grade('"nope"')].map((g) => g.ok && g.result.is_lower_better),
    [true, true, false, false],
  );
  const g = grade('1');
  assert.equal(g.ok && [g.result.score, g.result.gold_threshold], [2, null]);
});

test('2: the last Score output is rewarded, not the file overwritten after it (release 0.80, mlepipe 0.30)', async () => {
  const replies = [code('first model', write(17)), score('grade it'), code('a worse idea', write(8)), ANSWER];
  const rel = await run(replies, 'cactus', RELEASE);
  const own = await run(replies, 'cactus', DEFAULT);
  assert.equal(
    rel.turns.map((t) => t.action),
    ['code', 'validate', 'code', 'answer'],
  );
  assert.match(
    rel.messages[5].content,
    /^<tool_response>\nSubmission OK\. Details: \{"score_primary \(main competition metric for current code\)": 0\.85, /,
  );
  assert.equal(rel.rewarded, { submission: 'last-scored', turn: 1 });
  assert.is(rel.evaluation!.score, 0.4);
  // 0.1·1 + 0.2 + 0.5 (bronze at 0.85) against 0.1·1 + 0.2 + 0 (0.40 is below the median).
  assert.is(round(rel.reward), 0.8);
  assert.is(round(own.reward), 0.3);
});

test("4 and 7: format by the release's rule (empty reasoning fails, two calls pass; release 0.50, mlepipe 0.75); the last <code> block runs", async () => {
  const replies = [
    code(' \n ', write(20)),
    '<think>check</think>\n<tool_call>\npython\n<code>\nprint("one")\n</code>\n</tool_call>\n<tool_call>\npython\n<code>\nprint("two")\n</code>\n</tool_call>',
    score(''),
    ANSWER,
  ];
  const rel = await run(replies, 'cactus', RELEASE);
  const own = await run(replies, 'cactus', DEFAULT);
  assert.match(rel.turns[1].observation, /two/);
  assert.not.match(rel.turns[1].observation, /one/);
  assert.is(rel.variables.format, 0.5);
  assert.is(own.variables.format, 0.75);
  // Scored 1.0 at turn 2: gold. 0.1·0.5 + 0.9 against 0.1·0.75 + 0.9.
  assert.is(round(rel.reward), 0.95);
  assert.is(round(own.reward), 0.975);
});

test("7: Score with {} fails as the release's signature does, json5 reads single quotes; the unscored run falls back to the final file", async () => {
  const replies = [
    code('model', write(17)),
    '<think>grade</think>\n<tool_call>\n{"name": "Score", "arguments": {}}\n</tool_call>',
    `<think>again</think>\n<tool_call>\n{"name": 'Score', 'arguments': {'competition_id': 'cactus',},}\n</tool_call>`,
    code('worse', write(8)),
    ANSWER,
  ];
  const rel = await run(replies, 'cactus', RELEASE);
  assert.is(
    rel.turns[1].observation,
    "Error calling tool Score: SynScoreTool.call() missing 1 required positional argument: 'competition_id'",
  );
  assert.equal(
    rel.turns.map((t) => t.action),
    ['code', 'invalid', 'validate', 'code', 'answer'],
  );
  assert.equal(rel.rewarded, { submission: 'last-scored', turn: 2 });
  const unscored = await run(
    [
      code('model', write(17)),
      '<think>grade</think>\n<tool_call>\n{"name": "Score", "arguments": {}}\n</tool_call>',
      code('worse', write(8)),
      ANSWER,
    ],
    'cactus',
    RELEASE,
  );
  assert.is(unscored.rewarded, undefined);
  assert.is(round(unscored.reward), 0.3);
});

test("5: a null threshold resets the release's reward to 0.1·format (release 0.10, mlepipe 0.90)", async () => {
  const replies = [code('model', write(20)), score('grade', 'nogold'), ANSWER];
  const rel = await run(replies, 'nogold', RELEASE);
  const own = await run(replies, 'nogold', DEFAULT);
  assert.match(
    rel.turns[1].observation,
    /^Submission OK\. Details: .*"threshold_gold \(score needed for gold tier\)": null/,
  );
  assert.is(round(rel.reward), 0.1);
  // mlepipe: the gold milestone is never reached, silver is: 0.1 + 0.2 + 0.6.
  assert.is(round(own.reward), 0.9);
});

test('3 (grpo): the release masks more than a fifth of all tool responses timing out, after the advantages, and unknown endings', async () => {
  const sleep = code('slow', 'import time\ntime.sleep(30)');
  const groups = {
    // 1 timeout in 5 tool responses: 0.2, not more: kept by the release; any-step (and fraction:0.2 over 3 runs) masks it.
    fifth: [sleep, code('model', write(20)), score('grade'), code('look', 'print(1)'), score('again'), ANSWER],
    // 2 in 4: masked by both.
    half: [sleep, sleep, code('model', write(17)), score('grade'), ANSWER],
    // A call and an answer in one reply: run, then ended where the release finds no answer (unknown).
    unknown: [
      code('model', write(17)),
      score('grade'),
      '<think>and done</think>\n<tool_call>\npython\n<code>\nprint(3)\n</code>\n</tool_call>\n<answer>submission</answer>',
    ],
    plain: [code('model', write(8)), ANSWER],
  };
  const rollouts = [];
  for (const [name, replies] of Object.entries(groups)) {
    const r = await grpoRollout(sandbox, { id: 'cactus', dir: tasks.cactus }, replies, name);
    rollouts.push({ ...r, group_id: 'step1/0/cactus', sample: rollouts.length });
  }
  const unknown = rollouts[2] as Trajectory;
  assert.equal([unknown.ended, unknown.turns.at(-1)!.action], ['answer', 'code']);
  const opts = {
    advantage: 'grpo' as const,
    std: 'unbiased' as const,
    groupSize: 4,
    maxTurns: LIMITS.maxTurns,
    hyper: { lr: 1, clip_low: 0.2, clip_high: 0.28, kl: 0, temperature: 1 },
  };
  const release = buildBatch(1, rollouts, { ...opts, maskTimeouts: 'drop-after', timeoutRule: 'release' });
  const own = buildBatch(1, rollouts, { ...opts, maskTimeouts: 'drop', timeoutRule: 'any-step' });
  const fraction = buildBatch(1, rollouts, { ...opts, maskTimeouts: 'drop', timeoutRule: 'fraction:0.2' });
  assert.equal(
    release.trajectories.map((t) => t.mask_reason),
    [null, 'timed_out', 'unknown', null],
  );
  assert.equal(
    own.trajectories.map((t) => t.mask_reason),
    ['timed_out', 'timed_out', null, null],
  );
  assert.equal(
    fraction.trajectories.map((t) => t.mask_reason),
    ['timed_out', 'timed_out', null, null],
  );
  // Rewards: gold last scored, bronze, bronze, unscored 0.40: 0.1 + 0.9, 0.1 + 0.2 + 0.5 twice, 0.1 + 0.2.
  const rewards = rollouts.map((r) => round((r as Trajectory).reward));
  assert.equal(rewards, [1, 0.8, 0.8, 0.3]);
  // After the advantages: the masked ones count in the release's baseline; mlepipe's drop leaves them out of it.
  assert.is(round(release.groups[0].mean), round((1 + 0.8 + 0.8 + 0.3) / 4));
  assert.is(round(own.groups[0].mean), round((0.8 + 0.3) / 2));
});

test("verl export: the sandbox service's reward function reads the release's format rule and null thresholds as the rollouts do", async () => {
  const replies = [code(' ', write(20)), score('grade', 'nogold'), ANSWER];
  const rel = await run(replies, 'nogold', {
    reward: REWARD_PRESETS['sandmle-release'],
    inputs: { ...rewardInputs('sandmle-release', {}, {}), submission: 'final' },
  });
  const service = await startSandboxService({
    sandbox,
    tasksDir: join(root, 'tasks'),
    reward: REWARD_PRESETS['sandmle-release'],
    inputs: { ...rewardInputs('sandmle-release', {}, {}), submission: 'final' },
    python: PY,
    memoryMb: 2048,
    starter: async () => null,
  });
  try {
    const post = async (path: string, body: unknown) =>
      (await fetch(service.url + path, { method: 'POST', body: JSON.stringify(body) })).json() as Promise<
        Record<string, unknown>
      >;
    const { session } = (await post('/open', { task: 'nogold' })) as { session: string };
    await post('/run', { session, code: write(20), turn: 0, timeout_ms: 30_000 });
    const episode = { session, messages: rel.messages, turns: rel.turns, ended: rel.ended, submission: rel.submission };
    const r = await execa(
      PY,
      [
        '-c',
        'import json, sys\nsys.path.insert(0, sys.argv[1])\nfrom mlepipe_verl.reward import compute_score\nprint(json.dumps(compute_score("mlepipe", "", "nogold", {"mlepipe_episode": json.load(sys.stdin)})))',
        assetPath('gpu/verl'),
      ],
      { input: JSON.stringify(episode), env: { MLEPIPE_SANDBOX_URL: service.url } },
    );
    const scored = JSON.parse(r.stdout) as Record<string, number>;
    // Format 2/3 by the release's rule (the first reasoning is blank); gold is null: 0.1·2/3.
    assert.is(round(scored.mlepipe_format), round(2 / 3));
    assert.is(round(scored.score), round(0.1 * (2 / 3)));
    assert.is(round(scored.score), round(rel.reward));
  } finally {
    await service.close();
  }
});

test.run();
