// Every fault of every template, on its registered instance: the faulty starter
// scores worse than its fix on the same hidden partition, by more than Eq. 5's
// success margin (so fixing it is a success), and the fix is exactly the
// healthy configuration's starter. Healthy instances: the fix changes nothing.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execa } from 'execa';
import { join } from 'node:path';
import { pythonEnv } from '../../core/python.js';
import { suiteInstances } from '../../tasks/mltoolbench.js';
import { ROOT } from '../helpers.js';

// No bytecode beside the sources: tasks/py is part of node keys.
const NO_PYC = { PYTHONDONTWRITEBYTECODE: '1' };

interface Check {
  id: string;
  config: string;
  starter: number;
  fixed: number;
  fix_is_healthy: boolean;
  fix_succeeds: boolean;
}

const faulty = suiteInstances().filter((i) => i.split !== 'id' && i.config !== 'healthy');
const DOMAINS = ['cv', 'nlp', 'tabular', 'time_series', 'graph'];

for (const domain of DOMAINS) {
  test(`${domain}: each fault hurts and its fix recovers by more than the success margin`, async () => {
    const ids = faulty.filter((i) => i.domain === domain).map((i) => i.id);
    const r = await execa(pythonEnv('agent').python, ['-m', 'mltoolbench', 'check', ...ids, '--runs', '1'], {
      cwd: join(ROOT, 'tasks', 'py'),
      reject: false,
      env: NO_PYC,
    });
    assert.is(r.exitCode, 0, r.stderr);
    const rows = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Check);
    assert.is(rows.length, ids.length);
    const bad = rows
      .filter((c) => !c.fix_succeeds || !c.fix_is_healthy)
      .map((c) => `${c.id} (${c.config}): starter ${c.starter}, fixed ${c.fixed}, fix is healthy: ${c.fix_is_healthy}`);
    assert.equal(bad, []);
  });
}

test('a healthy instance: its starter is already the healthy one', async () => {
  const r = await execa(pythonEnv('agent').python, ['-m', 'mltoolbench', 'check', 'graph-train-13', '--runs', '1'], {
    cwd: join(ROOT, 'tasks', 'py'),
    reject: false,
    env: NO_PYC,
  });
  assert.is(r.exitCode, 0, r.stderr);
  const c = JSON.parse(r.stdout) as Check;
  assert.ok(c.fix_is_healthy);
  assert.is(c.fixed, c.starter);
});

test.run();
