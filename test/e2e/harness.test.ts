// The harness stage against a stand-in for aira-dojo (harness-standin.ts) that follows its interface: the
// config it is given, the run's final submission made again from the best node of its journal and graded by
// the competition's MLE-bench grader, a harness that crashes or runs past its time recorded per run with the
// reason, the checkout's commit and the overlay in the node key, and the preflight's refusals.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { choosePython } from '../../core/python.js';
import { startReplayServer, type ReplayServer, type Reply } from '../llm/replay-server.js';
import { cli, nodeKey, outputsOf, readJsonl, tmpProject } from '../helpers.js';
import { mirrorAt } from './mlebench-checkout.js';
import { draft, pythonWrapper, review, standinFiles } from './harness-standin.js';

// toy-mail: 40 training rows and 20 test rows; the answer is "spam" for ids divisible by 4 (5 of 20).
const ids = Array.from({ length: 20 }, (_, i) => 100 + i);
const label = (id: number) => (id % 4 === 0 ? 'spam' : 'ham');
const PUB = 'data/toy-mail/prepared/public';
const CODE = 'mle/mlebench/competitions/toy-mail';
const COMPETITION: Record<string, string> = {
  ...mirrorAt('mle'),
  [`${PUB}/train.csv`]:
    'id,x,label\n' + Array.from({ length: 40 }, (_, i) => `${i},${i % 4},${label(i)}`).join('\n') + '\n',
  [`${PUB}/test.csv`]: 'id,x\n' + ids.map((i) => `${i},${i % 4}`).join('\n') + '\n',
  [`${PUB}/sample_submission.csv`]: 'id,label\n' + ids.map((i) => `${i},ham`).join('\n') + '\n',
  [`${PUB}/description.md`]: '# toy-mail\n\nLabel each message of test.csv spam or ham. Scored by accuracy.\n',
  'data/toy-mail/prepared/private/test.csv': 'id,label\n' + ids.map((i) => `${i},${label(i)}`).join('\n') + '\n',
  [`${CODE}/config.yaml`]:
    'id: toy-mail\ndataset:\n  answers: toy-mail/prepared/private/test.csv\n  sample_submission: toy-mail/prepared/public/sample_submission.csv\ngrader:\n  name: accuracy\n  grade_fn: mlebench.competitions.toy-mail.grade:grade\n',
  [`${CODE}/grade.py`]:
    'def grade(submission, answers):\n    m = answers.merge(submission, on="id", suffixes=("", "_p"))\n    return float((m["label"] == m["label_p"]).mean())\n',
  // Twenty teams with accuracies 0.95, 0.90, ..., 0.00.
  [`${CODE}/leaderboard.csv`]:
    'scoreNullable,teamId,hasTeamName,submissionDate,score,hasScore\n' +
    Array.from(
      { length: 20 },
      (_, i) => `${(0.95 - 0.05 * i).toFixed(2)},${i},True,2020-01-01,${(0.95 - 0.05 * i).toFixed(2)},True`,
    ).join('\n') +
    '\n',
};

// Every message ham: 15 of 20 right. The rule x == 0 is spam: all 20 right.
const ALL_HAM = `import pandas as pd\nt = pd.read_csv("data/test.csv")\npd.DataFrame({"id": t.id, "label": "ham"}).to_csv("submission.csv", index=False)\nprint("validation accuracy 0.75")\n`;
const RULE = `import pandas as pd\nt = pd.read_csv("data/test.csv")\npd.DataFrame({"id": t.id, "label": ["spam" if x == 0 else "ham" for x in t.x]}).to_csv("submission.csv", index=False)\n`;

const experiment = (url: string, extra = '') => `name: harness
models:
  standin: { provider: openai, base_url: "${url}", model: standin-coder }
  slow: { provider: openai, base_url: "${url}", model: slow-coder }
stages:
  lite: { uses: mlebench, with: { data: data, mlebench: mle, set: [toy-mail] } }
  dojo:
    uses: harness
    needs: [lite]
    with:
      harness: aira-dojo
      checkout: aira-dojo
      overlay: sandmle/scaffolds/aira-dojo
      python: ./py
      solver: aide_greedy
      policies: [standin]
      repeats: 2
      settings: { step_limit: 2 }
${extra}`;

/** The stand-in project: competition, checkout (a git repository), overlay and the harness's interpreter. */
async function project(url: string, extra = ''): Promise<string> {
  const dir = await tmpProject({
    ...COMPETITION,
    ...standinFiles('aira-dojo', 'sandmle/scaffolds/aira-dojo'),
    'e.yaml': experiment(url, extra),
  });
  await writeFile(join(dir, 'py'), pythonWrapper(choosePython().path));
  await chmod(join(dir, 'py'), 0o755);
  const git = (...args: string[]) => execFileSync('git', ['-C', join(dir, 'aira-dojo'), ...args], { stdio: 'pipe' });
  git('init', '-q');
  git('add', '-A');
  git('-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-qm', 'standin');
  return dir;
}

/** Repeat 0 drafts twice (the second reviewed better), repeat 1 crashes; the slow model never answers in time. */
function script(): (body: ReplayServer['requests'][number]) => Reply {
  const replies = [draft(ALL_HAM), review(0.75), draft(RULE), review(0.9), { content: 'HARNESS-EXIT 3' }];
  let n = 0;
  return (body) =>
    body.model === 'slow-coder' ? { delayMs: 30_000, content: 'late' } : replies[Math.min(n++, replies.length - 1)];
}

test('aira-dojo stand-in: its config as it expects, the best node’s submission graded, a crash recorded per run', async () => {
  const server = await startReplayServer([script()]);
  try {
    const dir = await project(server.url);
    const r = await cli(['run', 'e.yaml'], { cwd: dir });
    assert.is(r.exitCode, 0, r.stderr);
    const out = await outputsOf(dir, 'dojo');
    const run0 = join(out, 'runs', 'toy-mail', 'standin', '0');
    // The experiment: the overlay's solver with Python's interpreter, the task and data, our client for every operator.
    const exp = parseYaml(await readFile(join(run0, 'config', '_exp', 'mlepipe.yaml'), 'utf8'));
    const defaults = Object.assign({}, ...exp.defaults.filter((d: unknown) => typeof d === 'object'));
    assert.is(defaults['override /interpreter'], 'python');
    assert.is(defaults['override /solver'], 'mlebench/greedy');
    assert.equal(defaults['override /solver/operators/mlebench@solver.operators'].slice(0, 3), [
      'aide_operators/debug',
      'aide_operators/draft',
      'aide_operators/improve',
    ]);
    assert.not.ok(exp.defaults.some((d: object) => JSON.stringify(d).includes('/benchmark')));
    for (const op of ['analyze', 'debug', 'draft', 'improve'])
      assert.is(defaults[`override /solver/client@solver.operators.${op}.llm.client`], 'mlepipe_policy');
    assert.is(exp.task.name, 'toy-mail');
    assert.is(exp.solver.step_limit, 2);
    assert.is(exp.metadata.seed, 1);
    const client = parseYaml(await readFile(join(run0, 'config', 'solver', 'client', 'mlepipe_policy.yaml'), 'utf8'));
    assert.equal([client.base_url, client.model_id, client.api], [server.url, 'standin-coder', 'litellm']);
    // The stand-in read it: the data it found and the client it called are those.
    assert.is(server.requests.filter((q) => q.model === 'standin-coder').length, 5);

    const runs = await readJsonl(join(out, 'results.jsonl'));
    assert.is(runs.length, 2);
    const [ok, crashed] = runs;
    // The better-reviewed node's code made again: every message right, as the harness's own grade says too.
    assert.is(ok.status, 'ok', JSON.stringify(ok));
    assert.is(ok.steps, 2);
    assert.is(ok.score, 1);
    assert.is(ok.harness_score, 1);
    assert.ok(ok.valid_submission && ok.gold_medal && ok.any_medal);
    assert.is(ok.human_rank, 1);
    assert.ok(existsSync(join(out, ok.submission)) && existsSync(join(out, ok.journal)));
    assert.is((await readFile(join(out, ok.journal), 'utf8')).trim().split('\n').length, 2);
    assert.equal(
      [crashed.status, crashed.failure, crashed.valid_submission],
      ['failed', 'aira-dojo exited with code 3', false],
    );
    const rows = JSON.parse(await readFile(join(out, 'rows.json'), 'utf8'));
    assert.equal([rows.policy[0].runs, rows.policy[0].failed, rows.policy[0].any_medal], [2, 1, 50]);
  } finally {
    await server.close();
  }
});

test('a harness past its time limit is stopped and its run recorded as timed out; past the node’s, runs are not started', async () => {
  const server = await startReplayServer([script()]);
  try {
    const dir = await project(server.url);
    await writeFile(
      join(dir, 'e.yaml'),
      (await readFile(join(dir, 'e.yaml'), 'utf8'))
        .replace('policies: [standin]', 'policies: [slow]')
        .replace('repeats: 2', 'repeats: 2\n      time_per_run_s: 2\n      total_s: 1'),
    );
    const r = await cli(['run', 'e.yaml'], { cwd: dir });
    assert.is(r.exitCode, 0, r.stderr);
    const [run, late] = await readJsonl(join(await outputsOf(dir, 'dojo'), 'results.jsonl'));
    assert.equal([run.status, run.failure, run.submission], ['failed', 'aira-dojo timed out after 2s', null]);
    assert.equal(
      [late.status, late.failure, late.repeat],
      ['not_run', "the node's total time (1s) ran out before it started", 1],
    );
  } finally {
    await server.close();
  }
});

test('a node stopped during its second run keeps the first when run again, and runs only the second', async () => {
  const server = await startReplayServer([script()]);
  try {
    const dir = await project(server.url);
    await writeFile(join(dir, 'interrupt-at'), '2');
    const stopped = await cli(['run', 'e.yaml'], { cwd: dir });
    assert.is.not(stopped.exitCode, 0, 'the stand-in stopped the node in its second run');
    await rm(join(dir, 'interrupt-at'));
    const r = await cli(['run', 'e.yaml'], { cwd: dir });
    assert.is(r.exitCode, 0, r.stderr);
    // Three starts in all: the first run once, the stopped second one again; the policy's replies go on from there.
    assert.is((await readFile(join(dir, 'invocations.txt'), 'utf8')).trim().split('\n').length, 3);
    assert.match(r.stdout + r.stderr, /1 of 2 runs/);
    const out = await outputsOf(dir, 'dojo');
    const [kept, again] = await readJsonl(join(out, 'results.jsonl'));
    assert.equal([kept.repeat, kept.status, kept.score], [0, 'ok', 1]);
    assert.ok(existsSync(join(out, kept.submission)) && existsSync(join(out, kept.journal)));
    assert.ok(existsSync(join(out, 'runs', 'toy-mail', 'standin', '0', 'harness.log')));
    assert.equal([again.repeat, again.failure], [1, 'aira-dojo exited with code 3']);
  } finally {
    await server.close();
  }
});

test('the checkout’s commit and the overlay’s experiment files are in the node key', async () => {
  const dir = await project('http://127.0.0.1:9/v1');
  const before = await nodeKey(dir, 'dojo');
  const git = (...args: string[]) => execFileSync('git', ['-C', join(dir, 'aira-dojo'), ...args], { stdio: 'pipe' });
  git('-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '--allow-empty', '-m', 'another');
  const committed = await nodeKey(dir, 'dojo');
  assert.is.not(committed, before);
  const exp = join(dir, 'sandmle/scaffolds/aira-dojo/src/dojo/configs/_exp/mlebench/aide_greedy_qwen3_8b.yaml');
  await writeFile(exp, (await readFile(exp, 'utf8')).replace('aide_operators/draft', 'aira_operators/draft'));
  assert.is.not(await nodeKey(dir, 'dojo'), committed);
});

test('preflight refuses a run without the checkout or without the packages the harness imports', async () => {
  const dir = await project('http://127.0.0.1:9/v1');
  const text = await readFile(join(dir, 'e.yaml'), 'utf8');
  await writeFile(join(dir, 'e.yaml'), text.replace('python: ./py', `python: ${choosePython().path}`));
  let r = await cli(['run', 'e.yaml'], { cwd: dir });
  assert.is(r.exitCode, 3, r.stderr);
  assert.match(r.stderr, 'cannot import hydra, omegaconf, litellm');
  await writeFile(join(dir, 'e.yaml'), text.replace('checkout: aira-dojo', 'checkout: nowhere'));
  r = await cli(['run', 'e.yaml'], { cwd: dir });
  assert.is(r.exitCode, 3, r.stderr);
  assert.match(r.stderr, `aira-dojo checkout ${join(dir, 'nowhere')} (stages.dojo.with.checkout, e.yaml:12:17)`);
});

test.run();
