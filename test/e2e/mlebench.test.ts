// MLE-bench through the CLI: a small MLE-bench-shaped data folder and checkout
// (two fake competitions with their own grade.py, config.yaml and
// leaderboard.csv, a third without prepared data), turned into tasks by an
// mlebench stage and solved by scripted agents; every run's medals must match
// the thresholds computed here by hand from the leaderboards.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync } from 'node:fs';
import { lstat, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { choosePython } from '../../core/python.js';
import { runEvaluator } from '../../tasks/evaluate.js';
import { cli, readJsonl, tmpProject } from '../helpers.js';
import { mirrorAt } from './mlebench-checkout.js';

/** A seeded stream in [0, 1) (a small LCG: the data need only be fixed, not good). */
function stream(seed: number): () => number {
  let s = seed;
  return () => (s = (s * 1103515245 + 12345) % 2147483648) / 2147483648;
}

function rows(
  n: number,
  seed: number,
  label: (x1: number, x2: number) => string,
  start = 0,
): { features: string[]; labels: string[] } {
  const r = stream(seed);
  const features: string[] = [];
  const labels: string[] = [];
  for (let i = 0; i < n; i++) {
    const x1 = r();
    const x2 = r();
    features.push(`${start + i},${x1.toFixed(4)},${x2.toFixed(4)}`);
    labels.push(label(x1, x2));
  }
  return { features, labels };
}

/** Files as MLE-bench's prepare scripts lay them out; not every competition has train.csv, sample_submission.csv or an id column named id. */
interface Layout {
  key?: string;
  train?: string;
  sample?: string;
}

function competition(
  id: string,
  target: string,
  label: (x1: number, x2: number) => string,
  sample: string,
  metric: string,
  leaderboard: number[],
  at: Layout = {},
): Record<string, string> {
  const { key = 'id', train: trainFile = 'train.csv', sample: sampleFile = 'sample_submission.csv' } = at;
  const train = rows(120, 7, label);
  const test = rows(60, 11, label, 1000);
  const ids = test.features.map((f) => f.split(',')[0]);
  const pub = `data/${id}/prepared/public`;
  const code = `mle/mlebench/competitions/${id}`;
  return {
    [`${pub}/${trainFile}`]:
      `${key},x1,x2,${target}\n` + train.features.map((f, i) => `${f},${train.labels[i]}`).join('\n') + '\n',
    [`${pub}/test.csv`]: `${key},x1,x2\n` + test.features.join('\n') + '\n',
    [`${pub}/${sampleFile}`]: `${key},${target}\n` + ids.map((i) => `${i},${sample}`).join('\n') + '\n',
    [`${pub}/description.md`]: `# ${id}\n\nPredict \`${target}\` for each row of test.csv.\n\n## Evaluation\n\nSubmissions are scored by ${metric}.\n`,
    [`data/${id}/prepared/private/test.csv`]:
      `${key},${target}\n` + ids.map((i, k) => `${i},${test.labels[k]}`).join('\n') + '\n',
    [`${code}/config.yaml`]: `id: ${id}\ndataset:\n  answers: ${id}/prepared/private/test.csv\n  sample_submission: ${id}/prepared/public/${sampleFile}\ngrader:\n  name: ${metric}\n  grade_fn: mlebench.competitions.${id}.grade:grade\n`,
    [`${code}/leaderboard.csv`]:
      'scoreNullable,teamId,hasTeamName,submissionDate,score,hasScore\n' +
      leaderboard.map((s, i) => `${s},${i + 1},True,2020-01-01 00:00:00,${s},True`).join('\n') +
      '\n',
  };
}

const GRADE_HEADER = `import numpy as np
import pandas as pd
from mlebench.grade_helpers import InvalidSubmissionError


def aligned(submission, answers, column, key="id"):
    if list(submission.columns) != [key, column]:
        raise InvalidSubmissionError(f"columns must be {key}, {column}")
    merged = answers.merge(submission, on=key, suffixes=("", "_pred"))
    if len(merged) != len(answers) or len(submission) != len(answers):
        raise InvalidSubmissionError("the ids do not match the test set")
    return merged[column], merged[column + "_pred"]
`;

// toy-spam: 50 teams with accuracies 1.00, 0.99, …, 0.51 (position p scores 1.01 - 0.01 p).
// Gold at position 5 (0.96), silver at 10 (0.91), bronze at 20 (0.81), median (0.76 + 0.75) / 2.
const SPAM_LB = Array.from({ length: 50 }, (_, i) => Number((1 - 0.01 * i).toFixed(2)));
const SPAM = { gold: 0.96, silver: 0.91, bronze: 0.81, median: 0.755, lower: false };
// toy-rent: 150 teams with errors 10, 20, …, 1500 (position p scores 10 p): lower is better.
// Gold at position 10 (100), silver at 30 (300), bronze at 60 (600), median (750 + 760) / 2.
const RENT_LB = Array.from({ length: 150 }, (_, i) => 10 * (i + 1));
const RENT = { gold: 100, silver: 300, bronze: 600, median: 755, lower: true };

const FILES = {
  ...mirrorAt('mle'),
  ...competition('toy-spam', 'label', (x1, x2) => (x1 + 0.3 * x2 > 0.6 ? 'spam' : 'ham'), 'ham', 'accuracy', SPAM_LB),
  // A BROKEN file beside it stands for a grader that fails whatever it is given (a lost model file, say).
  'mle/mlebench/competitions/toy-spam/grade.py':
    GRADE_HEADER +
    '\n\ndef grade(submission, answers):\n    import os\n    if os.path.exists(os.path.join(os.path.dirname(__file__), "BROKEN")):\n        raise RuntimeError("the grader lost its files")\n    if os.path.exists(os.path.join(os.path.dirname(__file__), "SCORE")):\n        return float(open(os.path.join(os.path.dirname(__file__), "SCORE")).read())\n    y, p = aligned(submission, answers, "label")\n    return float((y.astype(str) == p.astype(str)).mean())\n',
  // Laid out like MLE-bench's taxi fares and insults: labels.csv, an id column named key, a sample file of its own name.
  ...competition(
    'toy-rent',
    'rent',
    (x1, x2) => (1000 + 5000 * x1 + 300 * x2).toFixed(1),
    '0',
    'root mean squared error',
    RENT_LB,
    { key: 'key', train: 'labels.csv', sample: 'sample_submission_null.csv' },
  ),
  'mle/mlebench/competitions/toy-rent/grade.py':
    GRADE_HEADER +
    '\n\ndef grade(submission, answers):\n    y, p = aligned(submission, answers, "rent", key="key")\n    return float(np.sqrt(np.mean((y.astype(float) - p.astype(float)) ** 2)))\n',
  // Its code is in the checkout, but its data was never prepared.
  'mle/mlebench/competitions/toy-unprepared/grade.py': 'def grade(submission, answers):\n    return 0.0\n',
  'mle/mlebench/competitions/toy-unprepared/leaderboard.csv': 'score\n1\n0\n',
  'e.yaml': `name: mle
stages:
  comps: { uses: mlebench, with: { data: data, mlebench: mle, set: [toy-spam, toy-rent, toy-unprepared] } }
  agents:
    uses: eval
    needs: [comps]
    with: { policies: [scripted:majority, scripted:forest], max_turns: 5, step_timeout: 120, seed: 1 }
`,
};

type Th = typeof SPAM;
function expected(score: number | null, t: Th) {
  if (score === null) return { gold_medal: false, silver_medal: false, bronze_medal: false, above_median: false };
  const reach = (x: number) => (t.lower ? score <= x : score >= x);
  const gold = reach(t.gold);
  const silver = !gold && reach(t.silver);
  const bronze = !gold && !silver && reach(t.bronze);
  return {
    gold_medal: gold,
    silver_medal: silver,
    bronze_medal: bronze,
    above_median: t.lower ? score < t.median : score > t.median,
  };
}

/** The boolean fields of each competition's report in MLE-bench's grading report. */
const REPORT_FLAGS = [
  'any_medal',
  'gold_medal',
  'silver_medal',
  'bronze_medal',
  'above_median',
  'submission_exists',
  'valid_submission',
  'is_lower_better',
];

/**
 * One scripted run's result against its competition: a valid submission, the leaderboard's thresholds, a score
 * rounded as MLE-bench ranks them, its HumanRank and its medals.
 */
function checkGradedRun(run: Awaited<ReturnType<typeof readJsonl>>[number]): void {
  const close = (a: number, b: number) => Math.abs(a - b) < 1e-9;
  const t = run.task_id === 'toy-spam' ? SPAM : RENT;
  assert.ok(run.valid_submission, `${run.policy} on ${run.task_id}: ${run.grade_error}`);
  assert.ok(
    close(run.gold_threshold, t.gold) &&
      close(run.silver_threshold, t.silver) &&
      close(run.bronze_threshold, t.bronze) &&
      close(run.median_threshold, t.median),
    JSON.stringify(run),
  );
  assert.is(run.is_lower_better, t.lower);
  // Scores come rounded to 5 decimals, as MLE-bench ranks them.
  assert.is(Number(run.score.toFixed(5)), run.score);
  // HumanRank: 1 - (teams strictly better) / teams.
  const lb = run.task_id === 'toy-spam' ? SPAM_LB : RENT_LB;
  assert.ok(
    close(run.human_rank, 1 - lb.filter((x) => (t.lower ? x < run.score : x > run.score)).length / lb.length),
    `human_rank ${run.human_rank}`,
  );
  const { gold_medal, silver_medal, bronze_medal, above_median } = run;
  assert.equal(
    { gold_medal, silver_medal, bronze_medal, above_median },
    expected(run.score, t),
    `${run.policy} on ${run.task_id} scored ${run.score}`,
  );
}

test('MLE-bench competitions become tasks; scripted agents are graded by the competitions’ graders and leaderboards', async () => {
  const dir = await tmpProject(FILES);
  const r = await cli(['run', 'e.yaml'], { cwd: dir });
  assert.is(r.exitCode, 0, r.stderr);
  // The run goes on without the competition that has no data, and says so before it starts.
  assert.match(
    r.stderr,
    `missing (runs without it): prepared competition data ${join(dir, 'data', 'toy-unprepared', 'prepared', 'public')} (stages.comps.with.data, e.yaml:`,
  );

  const comps = (await cli(['outputs', 'e.yaml', 'comps'], { cwd: dir })).stdout.trim();
  const made = JSON.parse(await readFile(join(comps, 'mlebench.json'), 'utf8'));
  const missing = made.competitions.find((c: { id: string }) => c.id === 'toy-unprepared');
  assert.match(missing.error, `mlebench prepare -c toy-unprepared --data-dir ${join(dir, 'data')}`);
  const spamTask = JSON.parse(await readFile(join(comps, 'tasks', 'toy-spam', 'task.json'), 'utf8'));
  assert.equal(
    [spamTask.generator, spamTask.metric, spamTask.is_lower_better, spamTask.leaderboard_teams],
    ['mlebench', 'accuracy', false, 50],
  );
  // The prepared data is linked where MLE-bench put it, not copied into the cache; task.json records it by name, size and time.
  for (const [rel, prepared] of [
    ['public', 'public'],
    ['private/answers', 'private'],
  ]) {
    assert.ok((await lstat(join(comps, 'tasks', 'toy-spam', rel))).isSymbolicLink(), rel);
    assert.is(
      await realpath(join(comps, 'tasks', 'toy-spam', rel)),
      await realpath(join(dir, 'data', 'toy-spam', 'prepared', prepared)),
    );
  }
  assert.ok(spamTask.references.public.files.some((f: [string, number, number]) => f[0] === 'train.csv'));
  assert.not.ok(Object.keys(spamTask.files).some((f: string) => f.startsWith('public/')));
  // The agent's side holds no answers.
  assert.not.ok(spamTask.references.public.files.some((f: [string]) => f[0].includes('private')));

  const out = (await cli(['outputs', 'e.yaml', 'agents'], { cwd: dir })).stdout.trim();
  const results = await readJsonl(join(out, 'results.jsonl'));
  assert.is(results.length, 4);
  for (const run of results) checkGradedRun(run);
  // The ladder is visible: the majority guess earns nothing, the forest medals on the classification.
  const of = (policy: string, task: string) => results.find((x) => x.policy === policy && x.task_id === task);
  assert.is(of('scripted:majority', 'toy-spam').any_medal, false);
  assert.is(of('scripted:forest', 'toy-spam').any_medal, true);
  assert.is(of('scripted:majority', 'toy-rent').above_median, false);

  // The system prompt names the competition's own files and sample submission.
  const rent = (await readJsonl(join(out, 'trajectories.jsonl'))).find((t) => t.task_id === 'toy-rent');
  const system = rent.messages.find((m: { role: string }) => m.role === 'system').content;
  assert.match(system, '`labels.csv`');
  assert.match(system, '`public/sample_submission_null.csv` shows the');
  assert.not.match(system, 'train.csv');
  // The first look at the data finds the competition's own files.
  assert.equal(
    [rent.turns[0].exit_code, rent.turns[0].observation.includes('labels.csv (120, 4)')],
    [0, true],
    rent.turns[0].observation,
  );

  // MLE-bench's grading report beside ours: its totals and fields, floats and booleans never null.
  const ours = JSON.parse(await readFile(join(out, 'grading_report.json'), 'utf8'));
  assert.is(ours['scripted:forest'].total_runs, 2);
  const report = JSON.parse(await readFile(join(out, 'mlebench', 'scripted-forest_grading_report.json'), 'utf8'));
  assert.equal([report.total_runs, report.total_valid_submissions, report.total_medals], [2, 2, 2]);
  for (const c of report.competition_reports) {
    for (const k of ['gold_threshold', 'silver_threshold', 'bronze_threshold', 'median_threshold', 'score'])
      assert.type(c[k], 'number');
    for (const k of REPORT_FLAGS) assert.type(c[k], 'boolean');
    assert.ok(!Number.isNaN(Date.parse(c.created_at)));
    // The graded file is kept with the outputs, so that MLE-bench's own grader can grade it again.
    assert.match(
      await readFile(join(out, c.submission_path), 'utf8'),
      c.competition_id === 'toy-rent' ? /^key,rent\n/ : /^id,label\n/,
    );
  }
});

test('agents are shown the grader’s message about their submission, never a traceback; a grader that fails on everything is a fault', async () => {
  const dir = await tmpProject({
    ...FILES,
    'e.yaml': 'name: m\nstages:\n  comps: { uses: mlebench, with: { data: data, mlebench: mle, set: [toy-spam] } }\n',
  });
  assert.is((await cli(['run', 'e.yaml'], { cwd: dir })).exitCode, 0);
  const task = join((await cli(['outputs', 'e.yaml', 'comps'], { cwd: dir })).stdout.trim(), 'tasks', 'toy-spam');
  const python = choosePython().path;
  const grade = async (name: string, text: string) => {
    await writeFile(join(dir, name), text);
    return runEvaluator(task, python, join(dir, name));
  };
  // MLE-bench's InvalidSubmissionError: its message.
  const columns = await grade('cols.csv', 'id,guess\n1000,ham\n');
  assert.equal(columns, { ok: false, error: 'Submission invalid: columns must be id, label' });
  // Another error inside the grader while the sample submission grades: the submission's fault, in the grader's words.
  const ids = await grade('ids.csv', 'id,label\nabc,ham\n');
  assert.ok(!ids.ok && !ids.fault && ids.error.startsWith('Submission invalid: '), JSON.stringify(ids));
  assert.not.match(ids.ok ? '' : ids.error, 'Traceback');
  // A grader that returns infinity or NaN: a valid submission, as MLE-bench counts it (score is not None).
  const sample = await readFile(join(task, 'public', 'sample_submission.csv'), 'utf8');
  for (const [text, want] of [
    ['inf', Infinity],
    ['-inf', -Infinity],
    ['nan', NaN],
  ] as const) {
    await writeFile(join(dir, 'mle/mlebench/competitions/toy-spam/SCORE'), text);
    const g = await grade('any.csv', sample);
    assert.ok(g.ok && Object.is(g.score, want), `${text}: ${JSON.stringify(g)}`);
  }
  await rm(join(dir, 'mle/mlebench/competitions/toy-spam/SCORE'));
  // The grader fails on the sample submission too: the grader's fault.
  await writeFile(join(dir, 'mle/mlebench/competitions/toy-spam/BROKEN'), '');
  const broken = await grade('ok.csv', await readFile(join(task, 'public', 'sample_submission.csv'), 'utf8'));
  assert.equal(broken, {
    ok: false,
    error: 'Submission invalid: the grader lost its files',
    fault: 'mlebench.competitions.toy-spam.grade:grade raised RuntimeError: the grader lost its files',
  });
});

test('a competition whose grader does not load fails the node, naming it and why; keep_going leaves it out and counts it', async () => {
  const files = {
    ...FILES,
    ...competition('toy-broken', 'label', () => 'ham', 'ham', 'accuracy', SPAM_LB),
    'mle/mlebench/competitions/toy-broken/grade.py':
      'import a_package_nobody_installed\n\n\ndef grade(submission, answers):\n    return 1.0\n',
    'e.yaml':
      'name: m\nstages:\n  comps: { uses: mlebench, with: { data: data, mlebench: mle, set: [toy-spam, toy-broken] } }\n',
  };
  const dir = await tmpProject(files);
  const r = await cli(['run', 'e.yaml'], { cwd: dir });
  assert.is(r.exitCode, 1);
  assert.match(r.stderr, '1 of 2 MLE-bench competitions cannot be graded here');
  assert.match(r.stderr, 'toy-broken: its sample submission sample_submission.csv does not grade');
  assert.match(r.stderr, "ModuleNotFoundError: No module named 'a_package_nobody_installed'");
  const lenient = await cli(['run', 'e.yaml', '-S', 'stages.comps.with.keep_going=true'], { cwd: dir });
  assert.is(lenient.exitCode, 0, lenient.stderr);
  const out = (
    await cli(['outputs', 'e.yaml', 'comps', '-S', 'stages.comps.with.keep_going=true'], { cwd: dir })
  ).stdout.trim();
  const made = JSON.parse(await readFile(join(out, 'mlebench.json'), 'utf8'));
  assert.match(
    made.competitions.find((c: { id: string }) => c.id === 'toy-broken').broken,
    'a_package_nobody_installed',
  );
  assert.not.ok(existsSync(join(out, 'tasks', 'toy-broken')), 'no task of a competition that cannot be graded');
  assert.match(lenient.stderr, 'tasks=1, missing=0, broken=1');
});

test('an eval whose grader fails marks those runs grade_error and fails the node with the counts', async () => {
  const dir = await tmpProject({
    ...FILES,
    'e.yaml':
      'name: m\nstages:\n  comps: { uses: mlebench, with: { data: data, mlebench: mle, set: [toy-spam, toy-rent] } }\n  agents: { uses: eval, needs: [comps], with: { policy: scripted:majority, max_turns: 3, seed: 1 } }\n',
  });
  assert.is((await cli(['run', 'e.yaml', '--only', 'comps'], { cwd: dir })).exitCode, 0);
  await writeFile(join(dir, 'mle/mlebench/competitions/toy-spam/BROKEN'), '');
  const r = await cli(['run', 'e.yaml'], { cwd: dir });
  assert.is(r.exitCode, 1);
  assert.match(
    r.stderr,
    'the grader failed on 1 of 2 runs (grade_error in results.jsonl): toy-spam: 1 (mlebench.competitions.toy-spam.grade:grade raised RuntimeError: the grader lost its files)',
  );
  // Mended, the runs it failed on run again rather than stand as they were.
  await rm(join(dir, 'mle/mlebench/competitions/toy-spam/BROKEN'));
  assert.is((await cli(['run', 'e.yaml'], { cwd: dir })).exitCode, 0);
});

test('validate and plan pass without the data; plan --check and run name it; the node says what to prepare', async () => {
  const dir = await tmpProject({
    'e.yaml':
      'name: m\nstages:\n  comps: { uses: mlebench, with: { data: nowhere, mlebench: nothing } }\n  agents: { uses: eval, needs: [comps], with: { policy: scripted:random } }\n',
  });
  assert.is((await cli(['validate', 'e.yaml'], { cwd: dir })).exitCode, 0);
  const plan = await cli(['plan', 'e.yaml'], { cwd: dir });
  assert.is(plan.exitCode, 0);
  const data = `missing: MLE-bench data folder ${join(dir, 'nowhere')} (stages.comps.with.data, e.yaml:3:42)`;
  assert.ok(plan.stdout.includes(data), plan.stdout);
  assert.is((await cli(['plan', 'e.yaml', '--check'], { cwd: dir })).exitCode, 3);
  const refused = await cli(['run', 'e.yaml'], { cwd: dir });
  assert.is(refused.exitCode, 3);
  assert.ok(refused.stderr.includes(data), refused.stderr);
  assert.match(refused.stderr, `missing: MLE-bench checkout ${join(dir, 'nothing')}`);
  const r = await cli(['run', 'e.yaml', '--no-preflight'], { cwd: dir });
  assert.is(r.exitCode, 1);
  assert.match(r.stderr, 'mlebench prepare -c aerial-cactus-identification');
});

test.run();
