// The procedural task factory end to end: 21 tasks over every modality and
// all seven task kinds through the generate and filter stages, every task
// checked with its own evaluator; determinism of the bytes.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execa } from 'execa';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { outputsCommand } from '../../cli/commands/outputs.js';
import { runCommand } from '../../cli/commands/run.js';
import { memoryIO } from '../../cli/io.js';
import { listFiles } from '../../core/fs.js';
import { leaderboardScores, leaderboardThresholds } from '../../tasks/leaderboard.js';
import { ROOT, tmpProject } from '../helpers.js';

const EXP = (count: number, seed: number) => `name: factory
stages:
  envs: { uses: generate, with: { seeds: mlebench, count: ${count}, seed: ${seed} } }
  verified: { uses: filter, needs: [envs], with: { val: 0.1 } }
  counted: { uses: filter, needs: [envs], with: { val: 2, train: 5 } }
`;

async function outputs(dir: string, node: string): Promise<string> {
  const io = memoryIO();
  await outputsCommand(join(dir, 'e.yaml'), node, {}, io);
  return io.stdout[0];
}

let project = '';
let envs = '';
let tasks: string[] = [];

let kept = new Set<string>();

// Thresholds come from the reference teams' leaderboard, so a task on which no generic pipeline gets clear of
// the prior has tied lines and is dropped, as a real competition nobody could solve would be.
test('21 tasks over all seven task kinds; at least 85% pass sanity', async () => {
  project = await tmpProject({ 'e.yaml': EXP(21, 0) });
  const io = memoryIO();
  assert.is(await runCommand(join(project, 'e.yaml'), {}, io), 0, io.stderr.join('\n'));
  envs = await outputs(project, 'envs');
  const gen = JSON.parse(await readFile(join(envs, 'generation.json'), 'utf8'));
  assert.is(gen.candidates, 21);
  assert.is(gen.evaluator_ok, 21, JSON.stringify(gen.tasks.filter((t: { ok: boolean }) => !t.ok)));
  assert.equal(Object.keys(gen.by_generator).sort(), [
    'audio-classification',
    'graph-node-classification',
    'image-classification',
    'tabular-classification',
    'tabular-regression',
    'text-classification',
    'time-series-forecasting',
  ]);
  tasks = (await readdir(join(envs, 'tasks'))).sort();
  assert.is(tasks.length, 21);
  const report = JSON.parse(await readFile(join(await outputs(project, 'verified'), 'filter.json'), 'utf8'));
  assert.ok(report.counts.sane / report.counts.input >= 0.85, JSON.stringify(report.counts));
  const dropped = new Set((report.dropped as { task: string }[]).map((d) => d.task));
  kept = new Set(tasks.filter((t) => !dropped.has(t)));
  assert.is(report.counts.train + report.counts.val, report.counts.unique);
  // Absolute counts: 2 val and 5 train of what passes; the rest is left out of the output and counted.
  const counted = await outputs(project, 'counted');
  const split = JSON.parse(await readFile(join(counted, 'split.json'), 'utf8'));
  const c = JSON.parse(await readFile(join(counted, 'filter.json'), 'utf8')).counts;
  assert.equal([split.val.length, split.train.length, c.unused], [2, 5, report.counts.unique - 7]);
  assert.equal((await readdir(join(counted, 'tasks'))).sort(), [...split.train, ...split.val].sort());
});

test('every task: answers reach gold, the sample is below gold (tasks the filter keeps), malformed submissions get errors; thresholds from the leaderboard', async () => {
  const problems: string[] = [];
  // The checker grades many tasks in one Python (numpy and pandas imported once); two of them run side by side.
  const checked = new Map<string, { error?: string } & Record<string, any>>();
  const halves = [0, 1].map((k) => tasks.filter((_, i) => i % 2 === k));
  await Promise.all(
    halves.map(async (ids) => {
      const r = await execa(
        '/usr/bin/python3',
        [join(ROOT, 'test', 'tasks', 'check_task.py'), ...ids.map((id) => join(envs, 'tasks', id))],
        { reject: false },
      );
      const lines = String(r.stdout).trim().split('\n').filter(Boolean);
      ids.forEach((id, i) =>
        checked.set(id, lines[i] ? JSON.parse(lines[i]) : { error: `exit ${r.exitCode}: ${String(r.stderr)}` }),
      );
    }),
  );
  for (const id of tasks) {
    const dir = join(envs, 'tasks', id);
    const out = checked.get(id)!;
    if (out.error !== undefined) {
      problems.push(`${id}: checker failed: ${out.error.trim().split('\n').slice(-3).join(' ')}`);
      continue;
    }
    const { answer, sample } = out;
    if (answer.error) problems.push(`${id}: answers rejected: ${answer.error}`);
    else {
      const reach = answer.is_lower_better
        ? answer.score <= answer.gold_threshold
        : answer.score >= answer.gold_threshold;
      if (!reach) problems.push(`${id}: answers score ${answer.score}, gold ${answer.gold_threshold}`);
    }
    if (sample.error) problems.push(`${id}: sample rejected: ${sample.error}`);
    else if (kept.has(id)) {
      const below = sample.is_lower_better
        ? sample.score > sample.gold_threshold
        : sample.score < sample.gold_threshold;
      if (!below) problems.push(`${id}: sample ${sample.score} not worse than gold ${sample.gold_threshold}`);
    }
    for (const [name, res] of Object.entries(out.malformed as Record<string, { error?: string }>)) {
      if (typeof res.error !== 'string' || !res.error)
        problems.push(`${id}: ${name} was not refused: ${JSON.stringify(res)}`);
    }
    const taskJson = JSON.parse(await readFile(join(dir, 'task.json'), 'utf8'));
    const priv = await readdir(join(dir, 'private'));
    for (const f of ['answer.csv', 'threshold.json', 'evaluator.py', 'generate_task_env.py', 'spec.json'])
      if (!priv.includes(f)) problems.push(`${id}: no private/${f}`);
    const pub = await readdir(join(dir, 'public'));
    for (const f of ['description.md', 'train.csv', 'test.csv', 'sample_submission.csv'])
      if (!pub.includes(f)) problems.push(`${id}: no public/${f}`);
    if (taskJson.id !== id) problems.push(`${id}: task.json id ${taskJson.id}`);
    const th = JSON.parse(await readFile(join(dir, 'private', 'threshold.json'), 'utf8'));
    if (Object.keys(th).sort().join() !== 'bronze_threshold,gold_threshold,median_threshold,silver_threshold')
      problems.push(`${id}: threshold keys ${Object.keys(th)}`);
    // One threshold code path: the frozen thresholds are MLE-bench's rule applied to the task's leaderboard.
    const lbFile = join(dir, 'private', 'leaderboard.csv');
    const scores = leaderboardScores(await readFile(lbFile, 'utf8'), lbFile);
    if (scores.length < 25 || scores.length !== taskJson.leaderboard_teams)
      problems.push(`${id}: ${scores.length} teams, task.json says ${taskJson.leaderboard_teams}`);
    const want = leaderboardThresholds(scores);
    for (const k of ['gold_threshold', 'silver_threshold', 'bronze_threshold', 'median_threshold'] as const) {
      if (Math.abs(th[k] - want[k]) > 1e-6) problems.push(`${id}: ${k} ${th[k]} vs the leaderboard's ${want[k]}`);
    }
    const ordered = scores.every(
      (x, i) => i === 0 || (taskJson.is_lower_better ? x >= scores[i - 1] : x <= scores[i - 1]),
    );
    if (!ordered) problems.push(`${id}: leaderboard not in rank order`);
  }
  assert.equal(problems, []);
});

test('the same seed gives identical bytes; another seed gives other tasks', async () => {
  const digests = async (dir: string) =>
    (await listFiles(join(await outputs(dir, 'envs'), 'tasks'))).map((f) => `${f.path} ${f.sha256}`);
  const build = async (seed: number) => {
    const dir = await tmpProject({ 'e.yaml': EXP(3, seed).split('\n  verified')[0] + '\n' });
    const io = memoryIO();
    assert.is(await runCommand(join(dir, 'e.yaml'), {}, io), 0, io.stderr.join('\n'));
    return digests(dir);
  };
  // A task depends on the seed and its index only: a second build of the first three of the 21 above,
  // in another project, gives the same bytes.
  const a = await digests(project);
  const b = await build(0);
  const names = (d: string[]) => new Set(d.map((l) => l.split('/')[0]));
  assert.is(names(b).size, 3);
  assert.ok(b.length > 3 * 6);
  assert.equal(
    b,
    a.filter((l) => names(b).has(l.split('/')[0])),
  );
  const c = await build(6);
  const namesA = names(a);
  assert.ok(
    c.every((l) => !namesA.has(l.split('/')[0])),
    'different task ids',
  );
});

test.run();
