// The solution kit against real generated tasks of every kind: each scripted
// strategy writes a valid submission in the sandbox, and random is the worst.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { assetText } from '../../core/assets.js';
import { gradeSubmission } from '../../sandbox/evaluate.js';
import { createSandbox } from '../../sandbox/index.js';
import { selectSeeds } from '../../seeds/index.js';
import { draftSpec } from '../../seeds/strategist.js';
import { buildTask } from '../../tasks/factory.js';
import { medalReport } from '../../tasks/medals.js';

const STRATEGIES = ['random', 'majority', 'linear', 'forest', 'boosted'];

test('every strategy solves every kind of task validly; random medals least', async () => {
  const root = await mkdtemp(join(tmpdir(), 'mlepipe-kit-'));
  await mkdir(join(root, 'empty', 'public'), { recursive: true });
  const sandbox = createSandbox({ backend: 'bwrap', warm: true, poolSize: 2 });
  const medals: Record<string, number> = Object.fromEntries(STRATEGIES.map((s) => [s, 0]));
  const problems: string[] = [];
  try {
    const seeds = selectSeeds('mlebench').slice(0, 14);
    const tasks: string[] = [];
    for (const [i, dna] of seeds.entries()) {
      const spec = draftSpec(dna, { seed: 21, index: i });
      const s = await sandbox.open({ task: join(root, 'empty') });
      const r = await buildTask(spec, join(root, spec.task_id), { session: s, python: '/usr/bin/python3' });
      await s.close();
      assert.ok(r.ok, JSON.stringify(r));
      tasks.push(join(root, spec.task_id));
    }
    for (const task of tasks) {
      for (const strategy of STRATEGIES) {
        const s = await sandbox.open({ task });
        try {
          await writeFile(join(s.workspace, 'solve.py'), `${assetText('agents/kit/mlekit.py')}\nsolve(${JSON.stringify(strategy)})\n`);
          const run = await s.run({ file: 'solve.py' }, { timeoutMs: 120_000 });
          if (run.exitCode !== 0) {
            problems.push(`${strategy} on ${task}: ${run.stderr.trim().split('\n').slice(-2).join(' ')}`);
            continue;
          }
          const g = await gradeSubmission(task, s.workspace, { python: '/usr/bin/python3' });
          if (!g.ok) problems.push(`${strategy} on ${task}: ${g.error}`);
          else if (medalReport(g.result).any_medal) medals[strategy]++;
        } finally {
          await s.close();
        }
      }
    }
  } finally {
    await sandbox.shutdown();
    await rm(root, { recursive: true, force: true });
  }
  assert.equal(problems, []);
  console.log('any-medal counts over 14 tasks:', JSON.stringify(medals));
  for (const s of STRATEGIES.slice(1)) assert.ok(medals.random <= medals[s], `random (${medals.random}) vs ${s} (${medals[s]})`);
  assert.ok(medals.random < Math.max(medals.forest, medals.boosted));
});

test.run();
