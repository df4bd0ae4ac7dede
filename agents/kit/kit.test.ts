// The kit's LightGBM strategy, run in the agent environment on a small tabular task.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execa } from 'execa';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pythonEnv } from '../../core/python.js';
import { kitSource } from './source.js';

const agent = pythonEnv('agent');

/** A classification task in the factory's layout: the label follows x1 + x2 and a category. */
async function task(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'mlepipe-kit-'));
  await mkdir(join(dir, 'public'));
  const rows = (from: number, n: number, withLabel: boolean) =>
    Array.from({ length: n }, (_, k) => {
      const i = from + k;
      const x1 = ((i * 37) % 101) / 10;
      const x2 = ((i * 53) % 89) / 10;
      const cat = ['a', 'b', 'c'][i % 3];
      const label = x1 + x2 + (cat === 'b' ? 3 : 0) > 10 ? 'yes' : 'no';
      return [String(i), x1, x2, cat, ...(withLabel ? [label] : [])].join(',');
    });
  await writeFile(join(dir, 'public', 'train.csv'), ['id,x1,x2,cat,label', ...rows(0, 120, true)].join('\n') + '\n');
  await writeFile(join(dir, 'public', 'test.csv'), ['id,x1,x2,cat', ...rows(120, 40, false)].join('\n') + '\n');
  await writeFile(
    join(dir, 'public', 'sample_submission.csv'),
    ['id,label', ...rows(120, 40, false).map((r) => `${r.split(',')[0]},no`)].join('\n') + '\n',
  );
  await writeFile(
    join(dir, 'public', 'description.md'),
    '# Task\n\n## Evaluation\n\nSubmissions are scored by accuracy.\n',
  );
  return dir;
}

const solve = (dir: string, strategy: string, size = 'default') =>
  execa(agent.python, ['-c', `${kitSource()}\nsolve(${JSON.stringify(strategy)}, size=${JSON.stringify(size)})`], {
    cwd: dir,
    reject: false,
  });

test('lgbm fits LightGBM, validates it in the task metric and writes the same submission every time', async () => {
  assert.ok(existsSync(agent.python), `${agent.python} is missing: run ${agent.fix}`);
  const dir = await task();
  try {
    const r = await solve(dir, 'lgbm');
    assert.is(r.exitCode, 0, String(r.stderr));
    assert.match(String(r.stdout), /cv lgbm: [0-9.]+/);
    const valid = Number(/validation score \(accuracy\): ([0-9.]+)/.exec(String(r.stdout))?.[1]);
    assert.ok(valid > 0.75, String(r.stdout));
    const first = await readFile(join(dir, 'submission.csv'), 'utf8');
    assert.is(first.trim().split('\n').length, 41);
    assert.is(first.split('\n')[0], 'id,label');
    await solve(dir, 'lgbm');
    assert.is(await readFile(join(dir, 'submission.csv'), 'utf8'), first);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('lgbm without LightGBM stops at once with a clear error, writing nothing', async () => {
  const dir = await task();
  try {
    // A module of that name in the working folder shadows the installed one, as a Python without it would.
    await writeFile(join(dir, 'lightgbm.py'), 'raise ImportError("No module named lightgbm")\n');
    const r = await solve(dir, 'lgbm');
    // The kit's own refusal (SystemExit: exit 1 with its message), not an ImportError's traceback.
    assert.is(r.exitCode, 1, String(r.stderr));
    assert.not.match(String(r.stderr), 'Traceback');
    assert.match(String(r.stderr), 'strategy lgbm needs LightGBM');
    assert.match(String(r.stderr), 'use gbm');
    assert.not.ok(existsSync(join(dir, 'submission.csv')));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test("the ladder's later turns reuse earlier turns' cross-validation and fits, and submit the same bytes", async () => {
  const [laddered, fresh] = [await task(), await task()];
  try {
    // The small capacity keeps this quick; the memo works the same at every capacity.
    for (const strategy of ['linear', 'forest']) assert.is((await solve(laddered, strategy, 'small')).exitCode, 0);
    const memo = join(laddered, '.mlekit_memo');
    const before = (await readdir(memo)).sort();
    // Out-of-fold predictions and the final fit of each base model so far.
    assert.equal(
      before.filter((f) => f.startsWith('oof-')).map((f) => f.split('-')[1]),
      ['forest', 'linear'],
    );
    const r = await solve(laddered, 'boosted', 'small');
    assert.is(r.exitCode, 0, String(r.stderr));
    // Only gbm was cross-validated anew: forest and linear came from the memo.
    const added = (await readdir(memo)).filter((f) => !before.includes(f) && f.startsWith('oof-'));
    assert.equal(
      added.map((f) => f.split('-')[1]),
      ['gbm'],
    );
    assert.is((await solve(fresh, 'boosted', 'small')).exitCode, 0);
    assert.is(
      await readFile(join(laddered, 'submission.csv'), 'utf8'),
      await readFile(join(fresh, 'submission.csv'), 'utf8'),
    );
  } finally {
    await rm(laddered, { recursive: true, force: true });
    await rm(fresh, { recursive: true, force: true });
  }
});

test.run();
