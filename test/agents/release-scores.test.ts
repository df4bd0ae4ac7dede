// Scores that are not finite and the release's last call, replayed through mlepipe's rollouts (eval's, grpo's
// runRollouts and buildBatch) on a release-shaped task, with every figure worked by hand from the released code:
// deepresearch_tools.py (SynScoreTool.call), deepresearch_workflow.py (_extract_score_metrics, _score_to_reward,
// _convert_to_episode) and deepresearch_agent.py (_run). Then the eval's own files: a run's trajectory.json, its
// line of results.jsonl, both grading reports and the rows keep such a score, as MLE-bench's report does.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execa } from 'execa';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readTrajectories, readTrajectory, writeTrajectory } from '../../agents/trajectory-files.js';
import type { Trajectory } from '../../agents/trajectory.js';
import { readJson, readJsonl } from '../../core/json-files.js';
import { createSandbox } from '../../sandbox/index.js';
import { buildBatch } from '../../stages/grpo/batch.js';
import type { EvalParams } from '../../stages/eval/index.js';
import { writeOutputs } from '../../stages/eval/outputs.js';
import * as fx from './release-fixture.js';

let root = '';
const tasks = { raw: '', cactus: '' };
const sandbox = createSandbox({ backend: 'bwrap', warm: true, poolSize: 1 });

// `raw` prints the submission's second line (after the id) as the score's JSON text, and its third as
// is_lower_better, into one JSON document: bare NaN and Infinity as Python's json.dumps writes them, or a string.
const RAW_EVALUATOR = `import argparse
p = argparse.ArgumentParser()
p.add_argument("--submission_path")
a = p.parse_args()
lines = open(a.submission_path).read().splitlines()
raw, lower = lines[1].split(",", 1)[1], lines[2].split(",", 1)[1]
print('{"score": %s, "is_lower_better": %s, "gold_threshold": 0.95, "silver_threshold": 0.9, "bronze_threshold": 0.85, "median_threshold": 0.5}' % (raw, lower))
`;
const ACCURACY_EVALUATOR = `import argparse, json
import pandas as pd
p = argparse.ArgumentParser()
p.add_argument("--submission_path")
a = p.parse_args()
acc = float((pd.read_csv(a.submission_path)["label"].values == pd.read_csv("answer.csv")["label"].values).mean())
print(json.dumps({"score": acc, "is_lower_better": False, "gold_threshold": 0.95, "silver_threshold": 0.9, "bronze_threshold": 0.85, "median_threshold": 0.5}))
`;

test.before(async () => {
  root = await mkdtemp(join(tmpdir(), 'mlepipe-release-scores-'));
  tasks.raw = await fx.releaseTask(root, 'raw', RAW_EVALUATOR);
  tasks.cactus = await fx.releaseTask(root, 'cactus', ACCURACY_EVALUATOR);
});

test.after(async () => {
  await sandbox.shutdown();
  await rm(root, { recursive: true, force: true });
});

/** Code that leaves a submission the raw evaluator prints as `{"score": <raw>, "is_lower_better": <lower>, …}`. */
const rawSubmission = (raw: string, lower: string) =>
  `open("submission.csv", "w").write(${JSON.stringify(`id,label\n0,${raw}\n1,${lower}\n`)})\nprint("written")`;
const scored = (raw: string, lower: string) => [
  fx.code('write', rawSubmission(raw, lower)),
  fx.score('grade', 'raw'),
  fx.ANSWER,
];

// Each case: the evaluator's text, is_lower_better, the release's reward, and how the Score answer opens.
// The Score tool: json.loads takes bare NaN/Infinity (and the string "inf"), parse_number is float(): nan, inf,
// inf. A score that is not None is answered; below bronze (score > 0.85 when lower is better, < 0.85 when
// higher) it says so, and NaN compares False both ways. Details are json.dumps'd, NaN/Infinity written bare.
// The reward reads them back with json.loads: score not None, +0.2; float comparisons against gold 0.95,
// silver 0.9, bronze 0.85, median 0.5 in the metric's direction: nan reaches none (+0), inf (higher better)
// and -inf (lower better) gold (+0.7), inf with lower better none; +0.1·format, every reply well formed (1).
// mlepipe's default (sandmle-code on the final file, graded the same way) places them as MLE-bench does: the same.
const CASES: Array<[string, string, number, RegExp]> = [
  [
    'NaN',
    'false',
    0.3,
    /^Submission OK\. Details: \{"score_primary \(main competition metric for current code\)": NaN, /,
  ],
  ['Infinity', 'false', 1, /^Submission OK\. Details: \{"score_primary [^"]*": Infinity, /],
  ['Infinity', 'true', 0.3, /^Submission OK\. But you do not reach the bronze threshold.*": Infinity, /],
  ['-Infinity', 'true', 1, /^Submission OK\. Details: \{"score_primary [^"]*": -Infinity, /],
  ['"inf"', 'false', 1, /^Submission OK\. Details: \{"score_primary [^"]*": Infinity, /],
];

test('scores that are not finite: NaN 0.30, Infinity 1.00 (higher better) or 0.30 (lower), "inf" 1.00, as the release', async () => {
  for (const [raw, lower, reward, answer] of CASES) {
    const t = await fx.runOn(sandbox, { id: 'raw', dir: tasks.raw }, scored(raw, lower), fx.RELEASE);
    assert.equal(
      t.turns.map((x) => x.action),
      ['code', 'validate', 'answer'],
    );
    assert.match(t.turns[1].observation, answer, `${raw}, lower ${lower}`);
    assert.equal(t.rewarded, { submission: 'last-scored', turn: 1 }, `${raw}: the Score answer is rewarded`);
    assert.is(fx.round(t.reward), reward, `${raw}, lower ${lower}`);
    const own = await fx.runOn(sandbox, { id: 'raw', dir: tasks.raw }, scored(raw, lower), fx.DEFAULT);
    assert.is(fx.round(own.reward), reward, `${raw}, lower ${lower}: mlepipe's default`);
  }
});

test('grpo: the same grades through runRollouts; the eval keeps them through trajectory.json and its files', async () => {
  const t = (await fx.grpoRollout(
    sandbox,
    { id: 'raw', dir: tasks.raw },
    scored('Infinity', 'false'),
    'inf',
  )) as Trajectory;
  assert.is(fx.round(t.reward), 1);
  assert.is(t.evaluation!.score, Infinity);
  // The eval's item: written and read back as a finished run is.
  const item = join(root, 'item');
  await writeTrajectory(item, { ...t, policy: 'replay' });
  const back = await readTrajectory(item);
  assert.equal([back.evaluation!.score, back.turns[1].evaluation!.score], [Infinity, Infinity]);
  const out = join(root, 'out');
  await writeOutputs(out, [back], ['replay'], { seed: 0 } as EvalParams, [], new Map());
  const [result] = (await readJsonl(join(out, 'results.jsonl'))) as Array<Record<string, unknown>>;
  // MLE-bench: valid (score is not None); inf >= every threshold: gold, above the median.
  assert.equal(
    [result.score, result.valid_submission, result.gold_medal, result.above_median],
    [Infinity, true, true, true],
  );
  // The rescore's reader, the tables and both reports.
  assert.is((await readTrajectories(join(out, 'trajectories.jsonl')))[0].evaluation!.score, Infinity);
  const rows = await readJson<{ task: Array<{ score: number }> }>(join(out, 'rows.json'));
  assert.is(rows.task[0].score, Infinity);
  const report = join(out, 'mlebench', 'replay_grading_report.json');
  assert.match(await readFile(report, 'utf8'), '"score": Infinity,');
  // MLE-bench's reader (json.load, then CompetitionReport.from_dict's float()) reads it back as it wrote it.
  const py = await execa(fx.PY, [
    '-c',
    'import json, sys\nc = json.load(open(sys.argv[1]))["competition_reports"][0]\nprint(float(c["score"]), c["valid_submission"], c["gold_medal"])',
    report,
  ]);
  assert.is(py.stdout, 'inf True True');
  const ours = await readJson<Record<string, { total_valid_submissions: number }>>(join(out, 'grading_report.json'));
  assert.is(ours.replay.total_valid_submissions, 1);
});

test('the 15th call scoring and answering is kept (the release: token_limit_no_answer), the 14th is unknown', async () => {
  const think = '<think>still thinking</think>\nnothing to run yet';
  const last = (calls: number) => [
    fx.code('model', fx.write(17)),
    ...Array.from({ length: calls - 2 }, () => think),
    `${fx.score('grade and stop')}\n<answer>submission</answer>`,
  ];
  const rollouts = [];
  for (const [i, calls] of [15, 14].entries()) {
    const r = await fx.grpoRollout(sandbox, { id: 'cactus', dir: tasks.cactus }, last(calls), `calls${calls}`);
    rollouts.push({ ...r, group_id: 'step1/0/cactus', sample: i });
  }
  const [fifteenth, fourteenth] = rollouts as Trajectory[];
  assert.equal([fifteenth.turns.length, fifteenth.ended, fifteenth.turns.at(-1)!.action], [15, 'answer', 'validate']);
  assert.is(fourteenth.turns.length, 14);
  // Both scored 0.85 on their last call (bronze): 0.1·1 + 0.2 + 0.5.
  assert.equal(
    rollouts.map((r) => fx.round((r as Trajectory).reward)),
    [0.8, 0.8],
  );
  // The release's loop stops on the answer after the Score call; the check after it finds the tool response
  // last, no <answer> there: with calls left that is "answer not found" (UNKNOWN, masked by mask_unknown); on
  // the 15th of 15, num_llm_calls_available is 0: "token_limit_no_answer" (MAX_RESPONSE_LENGTH_EXCEEDED), kept
  // (mask_max_response_length_exceeded=False in train_mle_syn_*.sh).
  const batch = buildBatch(1, rollouts, {
    advantage: 'grpo',
    std: 'unbiased',
    groupSize: 2,
    maxTurns: fx.LIMITS.maxTurns,
    hyper: { lr: 1, clip_low: 0.2, clip_high: 0.28, kl: 0, temperature: 1 },
    maskTimeouts: 'drop-after',
    timeoutRule: 'release',
  });
  assert.equal(
    batch.trajectories.map((x) => x.mask_reason),
    [null, 'unknown'],
  );
});

test.run();
