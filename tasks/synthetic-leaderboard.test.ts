// A generated task's leaderboard: ranking, the files written, and a refused
// reference team, with a task's evaluator in real Python.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { choosePython } from '../core/python.js';
import { freezeLeaderboard, leaderboardCsv, thresholdJson } from './synthetic-leaderboard.js';

test('teams are ranked best first in either direction, ties by name', () => {
  const teams = [
    { team: 'b', score: 0.5 },
    { team: 'a', score: 0.5 },
    { team: 'c', score: 0.9 },
    { team: 'd', score: 0.1 },
  ];
  assert.is(leaderboardCsv(teams, false), 'rank,teamName,score\n1,c,0.9\n2,a,0.5\n3,b,0.5\n4,d,0.1\n');
  assert.is(leaderboardCsv(teams, true), 'rank,teamName,score\n1,d,0.1\n2,a,0.5\n3,b,0.5\n4,c,0.9\n');
});

test("threshold.json holds the four lines at the evaluator's precision", () => {
  const th = {
    gold_threshold: 0.123456789,
    silver_threshold: 0.1,
    bronze_threshold: 0.05,
    median_threshold: 0.0333333333,
    is_lower_better: false,
    teams: 9,
  };
  assert.equal(JSON.parse(thresholdJson(th)), {
    bronze_threshold: 0.05,
    gold_threshold: 0.123457,
    median_threshold: 0.033333,
    silver_threshold: 0.1,
  });
});

// An evaluator with the contract's score_submission: the score is the mean of the submission's `value` column,
// and a submission with a negative value is refused.
const EVALUATOR = `import pandas as pd
class Invalid(Exception):
    pass
def score_submission(path):
    v = pd.read_csv(path)["value"]
    if (v < 0).any():
        raise Invalid("negative values")
    return round(float(v.mean()), 6)
`;

async function task(values: Record<string, number>): Promise<{ dir: string; teams: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'mlepipe-synth-lb-'));
  await mkdir(join(dir, 'private'));
  await writeFile(join(dir, 'private', 'evaluator.py'), EVALUATOR);
  const teams = join(dir, 'teams');
  await mkdir(teams);
  for (const [name, v] of Object.entries(values))
    await writeFile(join(teams, `${name}.csv`), `id,value\n1,${v}\n2,${v}\n`);
  return { dir, teams };
}

test('ten teams graded by the evaluator: leaderboard.csv in rank order, MLE-bench thresholds, HumanRank file', async () => {
  // Lower is better; team tK scores K / 10, so the ranking is t1 … t10.
  const values = Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`t${i + 1}`, (i + 1) / 10]));
  const { dir, teams } = await task(values);
  const r = await freezeLeaderboard(dir, teams, choosePython().path, true);
  assert.ok(r.ok, JSON.stringify(r));
  const csv = await readFile(join(dir, 'private', 'leaderboard.csv'), 'utf8');
  assert.equal(
    csv
      .trim()
      .split('\n')
      .slice(1)
      .map((l) => l.split(',')[1]),
    ['t1', 't2', 't3', 't4', 't5', 't6', 't7', 't8', 't9', 't10'],
  );
  // 10 teams: gold at position 1, silver at 2, bronze at 4; median (0.5 + 0.6) / 2.
  assert.equal(JSON.parse(await readFile(join(dir, 'private', 'threshold.json'), 'utf8')), {
    bronze_threshold: 0.4,
    gold_threshold: 0.1,
    median_threshold: 0.55,
    silver_threshold: 0.2,
  });
  const lb = JSON.parse(await readFile(join(dir, 'private', 'leaderboard.json'), 'utf8'));
  assert.is(lb.is_lower_better, true);
  assert.equal(lb.scores, [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1]);
});

test('a reference team the evaluator refuses fails the task, naming the team and the reason', async () => {
  const { dir, teams } = await task({ good: 0.5, other: 0.7, broken: -1 });
  const r = await freezeLeaderboard(dir, teams, choosePython().path, false);
  assert.not.ok(r.ok);
  if (!r.ok) assert.match(r.error, /reference team broken: Invalid: negative values/);
});

test.run();
