// The success ceiling an eval node publishes beside its rates: read from each task's build check
// (private/attainability.json), the share of its tasks a known solution passes, in percent.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Trajectory } from '../../agents/trajectory.js';
import { attainableMax, factsByTask, NO_FACTS, taskFacts } from './facts.js';
import type { EvalParams } from './index.js';
import { writeOutputs } from './outputs.js';

/** A task folder whose build check said `attainable` (undefined: no check was kept). */
async function task(root: string, id: string, attainable?: boolean): Promise<{ id: string; dir: string }> {
  const dir = join(root, id);
  await mkdir(join(dir, 'private'), { recursive: true });
  if (attainable !== undefined)
    await writeFile(join(dir, 'private', 'attainability.json'), JSON.stringify({ attainable, tries: [] }));
  return { id, dir };
}

/** One finished run that passed Eq. 5 (or not), as much of a trajectory as the outputs read. */
const run = (policy: string, taskId: string, sample: number, success: boolean) =>
  ({
    task_id: taskId,
    policy,
    sample,
    scaffold: 'mlab',
    started: '2026-01-01T00:00:00.000Z',
    duration_ms: 1000,
    evaluation: null,
    starter_score: 0.5,
    variables: { format: 1, success: success ? 1 : 0 },
    turns: [],
    ended: 'answer',
    reward: null,
    submission: null,
    grade_error: null,
    messages: [],
  }) as unknown as Trajectory;

test('attainable_max: the share of the tasks within reach, per policy row and in the node metrics; none without checks', async () => {
  const root = await mkdtemp(join(tmpdir(), 'mlepipe-cap-'));
  const tasks = [
    await task(root, 'a', true),
    await task(root, 'b', false),
    await task(root, 'c', true),
    await task(root, 'd'),
  ];
  assert.equal((await taskFacts(tasks[1].dir)).attainable, false);
  assert.is((await taskFacts(tasks[3].dir)).attainable, null);
  assert.is(NO_FACTS.attainable, null);
  const facts = await factsByTask(tasks);
  // b is out of reach; d was never checked, so nothing says it is.
  assert.is(attainableMax(['a', 'b', 'c', 'd'], facts), 75);
  assert.is(attainableMax(['a', 'b', 'c'], facts), 66.67);
  assert.is(attainableMax(['d'], facts), undefined);
  const p = { seed: 0 } as EvalParams;
  const ids = ['a', 'b', 'c', 'd'];
  const runs = ['x', 'y'].flatMap((pol) => ids.map((t) => run(pol, t, 0, t !== 'b')));
  const out = await mkdtemp(join(tmpdir(), 'mlepipe-cap-out-'));
  const metrics = await writeOutputs(out, runs, ['x', 'y'], p, [], facts);
  const rows = JSON.parse(await readFile(join(out, 'rows.json'), 'utf8')) as { policy: Array<Record<string, unknown>> };
  assert.equal(
    rows.policy.map((r) => [r.policy, r.success, r.attainable_max]),
    [
      ['x', 75, 75],
      ['y', 75, 75],
    ],
  );
  assert.is(metrics.attainable_max, 75);
  // One policy: its row's fields are the node's metrics.
  const one = await writeOutputs(
    await mkdtemp(join(tmpdir(), 'mlepipe-cap-one-')),
    runs.slice(0, 4),
    ['x'],
    p,
    [],
    facts,
  );
  assert.is(one.attainable_max, 75);
  // Tasks no build checked (MLE-bench, generated ones): no ceiling is claimed.
  const plain = await writeOutputs(
    await mkdtemp(join(tmpdir(), 'mlepipe-cap-plain-')),
    [run('x', 'd', 0, true)],
    ['x'],
    p,
    [],
    facts,
  );
  assert.is(plain.attainable_max, undefined);
});

test("an AIDE run's journal is written twice: mlepipe's tree, and aideml's journal format beside it", async () => {
  const root = await mkdtemp(join(tmpdir(), 'mlepipe-journal-'));
  const facts = await factsByTask([await task(root, 'a')]);
  const aide = { nodes: [], node2parent: {}, __version: '2' };
  const t = { ...run('scripted:forest', 'a', 0, true), scaffold: 'aide', journal: { nodes: [], best: null, aide } };
  const out = await mkdtemp(join(tmpdir(), 'mlepipe-journal-out-'));
  await writeOutputs(out, [t as Trajectory], ['scripted:forest'], { seed: 0 } as EvalParams, [], facts);
  const dir = join(out, 'journals');
  const tree = JSON.parse(await readFile(join(dir, 'scripted-forest__a__r0.json'), 'utf8')) as Record<string, unknown>;
  assert.equal(tree, { nodes: [], best: null });
  assert.equal(JSON.parse(await readFile(join(dir, 'scripted-forest__a__r0.aide.json'), 'utf8')), aide);
});

test.run();
