// Through the built CLI: an eval whose reward alone changes is rescored from
// the recorded runs. The plan and diff say so; the rescore opens no sandbox
// (the project's sandbox is made unusable for it) and makes no item; its
// results equal a forced full rerun's; an ablation over rewards runs its
// episodes once.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  cli,
  closedPort,
  nodeKey,
  outputsOf,
  readJsonl,
  sharedCacheSettings,
  tmpProject,
  shareTaskNodes,
} from '../helpers.js';

// The generated tasks come from another test file that built the same key, when one did (test/shared-tasks.ts).
shareTaskNodes();

const HEAD = `stages:
  tasks: { uses: generate, with: { seeds: mlebench-tabular, count: 2, samples: [50, 80], seed: 1 } }
  verified: { uses: filter, needs: [tasks], with: { val: 0 } }
`;
const EXP = (reward: string) => `name: rescore
${HEAD}  agents:
    uses: eval
    needs: [verified]
    with: { policies: [scripted:linear, scripted:forest], max_turns: 4, step_timeout: 60, seed: 5, reward: ${reward} }
`;
const ABLATE = `name: rescore-ablate
${HEAD}  agents:
    uses: eval
    needs: [verified]
    with: { policies: [scripted:linear], max_turns: 4, step_timeout: 60, seed: 6, reward: sandmle-paper }
  rewards:
    uses: ablate
    target: agents
    matrix: { reward: [sandmle-paper, sparse, sandmle-code] }
`;

// One cache for both tests: the tasks they grade are generated and filtered once.
const { cache, settings: SETTINGS } = await sharedCacheSettings();
// The docker backend on an engine nobody answers: any episode would fail to open its jail.
const BROKEN = `${SETTINGS}sandbox: { backend: docker }\n`;

/** The fields of a results row an episode decides; its timing differs from run to run. */
const episodeFields = (r: Record<string, unknown>) => {
  const { created_at: _c, duration_s: _d, step_seconds: _s, ...rest } = r;
  return rest;
};
const sparse = (v: { format: number; gold: number }) => Number((0.1 * v.format + 0.9 * v.gold).toFixed(10));

test('reward changed alone: plan and diff say rescore, no episode reruns, results equal a full rerun', async () => {
  const dir = await tmpProject({ 'e.yaml': EXP('sandmle-paper'), 'f.yaml': EXP('sparse') }, SETTINGS);
  const first = await cli(['run', 'e.yaml'], { cwd: dir });
  assert.is(first.exitCode, 0, first.stderr);

  const plan = JSON.parse((await cli(['plan', 'f.yaml', '--json'], { cwd: dir })).stdout) as {
    nodes: { id: string; action: string; reason: string; from?: { key: string } }[];
  };
  const agents = plan.nodes.find((n) => n.id === 'agents')!;
  assert.is(agents.action, 'rescore');
  assert.match(agents.reason, /^rescore: only reward changed; rebuilt from the recorded runs of agents/);
  assert.is(agents.from?.key, await nodeKey(dir, 'agents', 'e.yaml'));
  assert.equal(
    plan.nodes.filter((n) => n.id !== 'agents').map((n) => n.action),
    ['cached', 'cached'],
  );
  const text = await cli(['plan', 'f.yaml'], { cwd: dir });
  assert.match(text.stdout, /0 to run, 1 to rescore, 2 cached/);
  // Not up to date: the node's entry is still to be written.
  const status = await cli(['status', 'f.yaml'], { cwd: dir });
  assert.is(status.exitCode, 1, status.stdout);
  assert.match(status.stdout, /1 of 3 nodes stale\n {2}agents: rescore: only reward changed/);
  const diff = JSON.parse((await cli(['diff', 'e.yaml', 'f.yaml', '--json'], { cwd: dir })).stdout) as {
    nodes: { id: string; status: string }[];
  };
  assert.equal(diff.nodes, [
    { id: 'tasks', status: 'same' },
    { id: 'verified', status: 'same' },
    { id: 'agents', status: 'rescore' },
  ]);

  await writeFile(join(dir, 'mlepipe.config.yaml'), BROKEN);
  const port = await closedPort();
  const env = { DOCKER_HOST: `tcp://127.0.0.1:${port}` };
  const rescored = await cli(['run', 'f.yaml'], { cwd: dir, env });
  assert.is(rescored.exitCode, 0, rescored.stderr + rescored.stdout);
  const key = await nodeKey(dir, 'agents', 'f.yaml');
  // No rollout checkpoint was made under the new key: the episodes were read, not run.
  assert.not.ok(existsSync(join(cache, 'items', key)));
  const log = await readFile(join(cache, 'logs', `${key}.log`), 'utf8');
  assert.match(log, /rescored 4 recorded runs of [0-9a-f]{12}; no episode ran/);
  const manifest = JSON.parse(await readFile(join(cache, 'nodes', key, 'manifest.json'), 'utf8')) as {
    rescoredFrom?: string;
    metrics: Record<string, unknown>;
  };
  assert.is(manifest.rescoredFrom, await nodeKey(dir, 'agents', 'e.yaml'));
  assert.is(manifest.metrics.rescored_runs, 4);

  const out = await outputsOf(dir, 'agents', 'f.yaml');
  const trajectories = await readJsonl(join(out, 'trajectories.jsonl'));
  for (const t of trajectories)
    assert.is(Number(t.reward.toFixed(10)), sparse(t.variables), `${t.policy} on ${t.task_id}`);
  const results = await readJsonl(join(out, 'results.jsonl'));
  const rows = JSON.parse(await readFile(join(out, 'rows.json'), 'utf8')) as {
    policy: Record<string, unknown>[];
    task: unknown;
    win_rate: unknown;
  };
  // The graded files come along for MLE-bench's own grader.
  for (const r of results)
    if (r.kept_submission) assert.ok(existsSync(join(out, r.kept_submission)), r.kept_submission);

  // The same node run in full, with a sandbox that works, writes the same results.
  await writeFile(join(dir, 'mlepipe.config.yaml'), SETTINGS);
  const full = await cli(['run', 'f.yaml', '--force', 'agents'], { cwd: dir });
  assert.is(full.exitCode, 0, full.stderr);
  const again = await outputsOf(dir, 'agents', 'f.yaml');
  assert.ok(existsSync(join(cache, 'items', key)), 'the full run made its rollout checkpoints');
  assert.equal((await readJsonl(join(again, 'results.jsonl'))).map(episodeFields), results.map(episodeFields));
  const rowsAgain = JSON.parse(await readFile(join(again, 'rows.json'), 'utf8')) as typeof rows;
  const timeless = (r: typeof rows) => [r.policy.map(({ duration_s: _d, ...x }) => x), r.task, r.win_rate];
  assert.equal(timeless(rowsAgain), timeless(rows));
});

test('an ablation over rewards runs its episodes once and rescores the other arms', async () => {
  const dir = await tmpProject({ 'a.yaml': ABLATE }, SETTINGS);
  const plan = JSON.parse((await cli(['plan', 'a.yaml', '--json'], { cwd: dir })).stdout) as {
    nodes: { id: string; action: string; from?: { node: string } }[];
  };
  const arms = plan.nodes.filter((n) => n.id.startsWith('agents@'));
  assert.equal(
    arms.map((n) => [n.id, n.action, n.from?.node]),
    [
      ['agents@reward=sandmle-paper', 'run', undefined],
      ['agents@reward=sparse', 'rescore', 'agents@reward=sandmle-paper'],
      ['agents@reward=sandmle-code', 'rescore', 'agents@reward=sandmle-paper'],
    ],
  );
  const r = await cli(['run', 'a.yaml'], { cwd: dir });
  assert.is(r.exitCode, 0, r.stderr);
  // The progress shows the two arms as rescores, not as runs, and counts them so.
  assert.match(r.stderr, /mlepipe run rescore-ablate: \d+ nodes, \d+ cached, \d+ to run, 2 to rescore/);
  assert.match(r.stderr, /↻ agents@reward=sparse +rescoring from the recorded runs; log /);
  assert.match(r.stderr, /✔ agents@reward=sparse +rescored in /);
  assert.not.match(r.stderr, /▶ agents@reward=sparse/);
  assert.match(r.stderr, /done: \d+ ran, \d+ cached, 0 failed, 2 rescored in /);
  for (const arm of arms.slice(1))
    assert.not.ok(existsSync(join(cache, 'items', await nodeKey(dir, arm.id, 'a.yaml'))), arm.id);
  const paper = await readJsonl(
    join(await outputsOf(dir, 'agents@reward=sandmle-paper', 'a.yaml'), 'trajectories.jsonl'),
  );
  const sp = await readJsonl(join(await outputsOf(dir, 'agents@reward=sparse', 'a.yaml'), 'trajectories.jsonl'));
  // The same runs, scored by each arm's formula.
  assert.equal(
    sp.map((t) => t.turns),
    paper.map((t) => t.turns),
  );
  for (const t of sp) assert.is(Number(t.reward.toFixed(10)), sparse(t.variables));
  const table = JSON.parse(await readFile(join(await outputsOf(dir, 'rewards', 'a.yaml'), 'table.json'), 'utf8')) as {
    rows: unknown[];
  };
  assert.is(table.rows.length, 3);
});

test.run();
