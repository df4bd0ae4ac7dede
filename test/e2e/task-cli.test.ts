// `mlepipe task import-sandmle` and `mlepipe task show` through the built CLI.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { cli, tmpProject } from '../helpers.js';

const EVALUATOR = `import argparse, json, os
p = argparse.ArgumentParser(); p.add_argument("--submission_path"); a = p.parse_args()
here = os.path.dirname(os.path.abspath(__file__))
ans = open(os.path.join(here, "answer.csv")).read().split()
sub = open(a.submission_path).read().split()
score = sum(x == y for x, y in zip(ans[1:], sub[1:])) / (len(ans) - 1)
print(json.dumps({"score": score, "gold_threshold": 0.9, "silver_threshold": 0.8, "bronze_threshold": 0.7, "median_threshold": 0.5, "is_lower_better": False}))
`;

test('import-sandmle moves the evaluator and answers out of public/; task show grades the sample', async () => {
  const files: Record<string, string> = {};
  for (const id of ['spam-a', 'spam-b']) {
    const base = `release/${id}/prepared/public`;
    files[`${base}/description.md`] = '# Spam\n';
    files[`${base}/train.csv`] = 'id,x,y\n1,0.1,0\n';
    files[`${base}/test.csv`] = 'id,x\n2,0.2\n3,0.3\n';
    files[`${base}/sample_submission.csv`] = 'id,y\n2,1\n3,1\n';
    files[`${base}/answer.csv`] = 'id,y\n2,0\n3,1\n';
    files[`${base}/evaluator.py`] = EVALUATOR;
  }
  const dir = await tmpProject(files);
  const r = await cli(['task', 'import-sandmle', 'release', 'tasks'], { cwd: dir });
  assert.is(r.exitCode, 0, r.stderr);
  assert.is(
    r.stdout.trim(),
    'spam-a: moved answer.csv, evaluator.py to private/\nspam-b: moved answer.csv, evaluator.py to private/',
  );
  assert.equal((await readdir(join(dir, 'tasks', 'spam-a', 'public'))).sort(), [
    'description.md',
    'sample_submission.csv',
    'test.csv',
    'train.csv',
  ]);
  assert.equal((await readdir(join(dir, 'tasks', 'spam-a', 'private'))).sort(), ['answer.csv', 'evaluator.py']);
  const show = JSON.parse((await cli(['task', 'show', 'tasks/spam-a', '--json'], { cwd: dir })).stdout);
  assert.is(show.task.generator, 'sandmle-release');
  assert.is(show.sample.score, 0.5);
  assert.is(show.sanity, 'ok');
  const none = await cli(['task', 'import-sandmle', 'nowhere', 'tasks'], { cwd: dir });
  assert.is(none.exitCode, 2);
  assert.match(none.stderr, 'no SandMLE task found');
});

// The release's layout: the evaluator opens answer.csv and threshold.json by
// relative path (it ran beside them) and prints indented JSON. Its stdout is
// read whole, as the release reads it, so progress goes to stderr.
const RELEASE_EVALUATOR = `import argparse, json, math, sys
p = argparse.ArgumentParser(); p.add_argument("--submission_path", default="sample_submission.csv"); a = p.parse_args()
ans = [float(l.split(",")[1]) for l in open("answer.csv").read().split()[1:]]
sub = [float(l.split(",")[1]) for l in open(a.submission_path).read().split()[1:]]
rmse = math.sqrt(sum((x - y) ** 2 for x, y in zip(ans, sub)) / len(ans))
th = json.load(open("threshold.json"))
print("computing RMSE", file=sys.stderr)
print(json.dumps({"score": rmse, **th, "is_lower_better": "True"}, indent=2))
`;

test('a released task whose evaluator reads answer.csv relatively and prints indented JSON imports and grades', async () => {
  const base = 'release/house-rent/prepared/public';
  const dir = await tmpProject({
    [`${base}/description.md`]: '# Rent\n',
    [`${base}/train.csv`]: 'id,x,y\n1,0.1,3\n',
    [`${base}/test.csv`]: 'id,x\n2,0.2\n3,0.3\n',
    [`${base}/sample_submission.csv`]: 'id,y\n2,0\n3,0\n',
    [`${base}/answer.csv`]: 'id,y\n2,3\n3,4\n',
    [`${base}/threshold.json`]:
      '{"gold_threshold": 0.5, "silver_threshold": 1, "bronze_threshold": 2, "median_threshold": 3}',
    [`${base}/evaluator.py`]: RELEASE_EVALUATOR,
  });
  const r = await cli(['task', 'import-sandmle', 'release', 'tasks'], { cwd: dir });
  assert.is(r.exitCode, 0, r.stderr + r.stdout);
  const show = JSON.parse((await cli(['task', 'show', 'tasks/house-rent', '--json'], { cwd: dir })).stdout);
  assert.is(show.task.metric, 'rmse');
  assert.is(show.task.is_lower_better, true);
  // sqrt((9 + 16) / 2)
  assert.ok(Math.abs(show.sample.score - Math.sqrt(12.5)) < 1e-12, String(show.sample.score));
  assert.is(show.sample.is_lower_better, true);
  assert.is(show.sanity, 'ok');
});

test('generate through the CLI: an llm backend without a model, and bad seed sets, point at the YAML', async () => {
  const dir = await tmpProject({
    'a.yaml': 'name: a\nstages:\n  envs: { uses: generate, with: { backend: llm, count: 2 } }\n',
    'b.yaml': 'name: b\nstages:\n  envs: { uses: generate, with: { seeds: mlebench-video, count: 2 } }\n',
  });
  const a = await cli(['plan', 'a.yaml'], { cwd: dir });
  assert.is(a.exitCode, 2);
  assert.is(
    a.stderr.trim(),
    'a.yaml:3:44: stages.envs.with.backend: backend: llm needs model: (the name of a models: entry)',
  );
  const b = await cli(['plan', 'b.yaml'], { cwd: dir });
  assert.is(b.exitCode, 2);
  assert.match(b.stderr, /^b\.yaml:3:42: stages\.envs\.with\.seeds: unknown seed set "mlebench-video"/);
});

test.run();
