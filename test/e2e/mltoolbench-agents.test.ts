// The reference agents on the suite's ID split, through the CLI: `diagnose`,
// which fixes the starter where its tool answers point, succeeds (Eq. 5) on
// clearly more tasks than `blind`, which edits every starter the same way:
// the 95% intervals over tasks do not overlap. Its tool use is recorded.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { cli, tmpProject } from '../helpers.js';

const EXP = `name: reference
stages:
  suite: { uses: mltoolbench, with: { split: id, runs: 2 } }
  agents: { uses: eval, needs: [suite], with: { scaffold: mlab, tools: all, policies: [scripted:diagnose, scripted:blind], max_turns: 12, step_timeout: 300 } }
`;

test('ID split: diagnose beats blind with non-overlapping 95% intervals; diagnose calls tools, blind none', async () => {
  const dir = await tmpProject({ 'e.yaml': EXP });
  const r = await cli(['run', 'e.yaml'], { cwd: dir });
  assert.is(r.exitCode, 0, r.stderr + r.stdout);
  const out = (await cli(['outputs', 'e.yaml', 'agents'], { cwd: dir })).stdout.trim();
  const rows = JSON.parse(await readFile(join(out, 'rows.json'), 'utf8')) as { policy: Array<Record<string, number | string | null>> };
  const row = (p: string) => rows.policy.find((x) => x.policy === p)!;
  const d = row('scripted:diagnose');
  const b = row('scripted:blind');
  assert.is(d.tasks, 25);
  assert.is(d.valid_submission, 100);
  assert.is(b.valid_submission, 100);
  assert.ok((d.success_lo as number) > (b.success_hi as number), `diagnose ${d.success} [${d.success_lo}, ${d.success_hi}] vs blind ${b.success} [${b.success_lo}, ${b.success_hi}]`);
  assert.ok((d.tool_calls as number) > 1);
  assert.ok((d.coverage_tabular as number) > 0 && (d.coverage_vision as number) > 0 && (d.coverage_graph as number) > 0);
  assert.is(b.tool_calls, 0);
  // Healthy instances leave diagnose nothing to fix, so it cannot succeed on them.
  const runs = (await readFile(join(out, 'results.jsonl'), 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as { task_id: string; policy: string; success: boolean });
  const healthy = ['cv-id-05', 'nlp-id-05', 'tabular-id-05', 'time_series-id-05', 'graph-id-05'].map((s) => `mltb-v1-${s}`);
  assert.ok(runs.filter((x) => x.policy === 'scripted:diagnose' && healthy.includes(x.task_id)).every((x) => !x.success));
});

test.run();
