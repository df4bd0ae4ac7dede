import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { envInstalled, pythonEnv } from '../../core/python.js';
import type { StageContext } from '../contract.js';
import { execa } from 'execa';
import { readdir } from 'node:fs/promises';
import { assetPath } from '../../core/assets.js';
import { preloadFor, stageSandbox } from './sandbox.js';

test('the process backend runs steps with the interpreter the stage was given', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'mlepipe-stagebox-'));
  try {
    const task = join(dir, 'task');
    await mkdir(join(task, 'public'), { recursive: true });
    // An interpreter that leaves a mark, then is Python.
    const python = join(dir, 'python');
    await writeFile(python, `#!/bin/sh\necho used >> ${join(dir, 'mark')}\nexec /usr/bin/python3 "$@"\n`);
    await chmod(python, 0o755);
    const ctx = { sandbox: { backend: 'process' }, python, log: () => {} } as unknown as StageContext<unknown>;
    const sandbox = stageSandbox(ctx, 1);
    const session = await sandbox.open({ task });
    try {
      await writeFile(join(session.workspace, 'step.py'), 'print("hi")\n');
      const r = await session.run({ file: 'step.py' });
      assert.is(r.stdout.trim(), 'hi', r.stderr);
    } finally {
      await session.close();
      await sandbox.shutdown();
    }
    assert.match(await readFile(join(dir, 'mark'), 'utf8'), 'used');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test("jails run the stage's interpreter (the agent environment) and preload what the settings list, else what the stage names", async () => {
  const agent = pythonEnv('agent');
  assert.ok(envInstalled(agent), `the agent environment is not installed: ${agent.fix}`);
  const dir = await mkdtemp(join(tmpdir(), 'mlepipe-stagebox-'));
  try {
    const task = join(dir, 'task');
    await mkdir(join(task, 'public'), { recursive: true });
    const probe = 'import sys\nprint(sys.prefix, "sklearn" in sys.modules, "lightgbm" in sys.modules)\n';
    const seen: string[] = [];
    // The settings' list over the stage's; the stage's (the task generator's) over the agent environment's.
    for (const [preload, modules] of [
      [['sklearn'], ['numpy']],
      [undefined, ['sklearn']],
      [undefined, undefined],
    ]) {
      const ctx = {
        sandbox: { backend: 'bwrap', preload },
        python: agent.python,
        log: () => {},
      } as unknown as StageContext<unknown>;
      const sandbox = stageSandbox(ctx, 1, modules);
      const session = await sandbox.open({ task });
      try {
        assert.is(session.backend, 'warm-bwrap');
        await writeFile(join(session.workspace, 'step.py'), probe);
        const r = await session.run({ file: 'step.py' });
        assert.is(r.exitCode, 0, r.stderr);
        seen.push(r.stdout.trim());
      } finally {
        await session.close();
        await sandbox.shutdown();
      }
    }
    assert.equal(seen, [
      '/opt/mlepipe/agent True False',
      '/opt/mlepipe/agent True False',
      '/opt/mlepipe/agent True True',
    ]);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test("a jail is as large as the stage's memory_mb: a step may use more than the default jail holds", async () => {
  const agent = pythonEnv('agent');
  const dir = await mkdtemp(join(tmpdir(), 'mlepipe-stagebox-'));
  try {
    const task = join(dir, 'task');
    await mkdir(join(task, 'public'), { recursive: true });
    const ctx = {
      sandbox: { backend: 'docker' },
      python: agent.python,
      log: () => {},
    } as unknown as StageContext<unknown>;
    // 3.5 GiB touched: over the 2 GiB a jail holds by default (plus its server's share), under the stage's 4.5.
    const sandbox = stageSandbox(ctx, 1, ['numpy'], { memoryMb: 4608 });
    const session = await sandbox.open({ task, limits: { memoryMb: 4608 } });
    try {
      assert.is(session.backend, 'warm-docker');
      await writeFile(
        join(session.workspace, 'step.py'),
        'import numpy as np\na = np.ones(3584 * 2**20, dtype=np.uint8)\nprint(int(a.sum() >> 20))\n',
      );
      const r = await session.run({ file: 'step.py' });
      assert.is(r.oom, undefined, r.stderr);
      assert.is(r.exitCode, 0, r.stderr);
      assert.is(r.stdout.trim(), '3584');
    } finally {
      await session.close();
      await sandbox.shutdown();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test("scripted agents' jails preload every library the kit, the suite's starters and the tools import, and neither torch nor XGBoost", async () => {
  const mlab = preloadFor({ models: false, mlab: true })!;
  const kit = preloadFor({ models: false, mlab: false })!;
  assert.is(
    preloadFor({ models: true, mlab: true }),
    undefined,
    "a model's code may import anything: the whole environment",
  );
  for (const list of [mlab, kit]) for (const heavy of ['torch', 'xgboost']) assert.not.ok(list.includes(heavy), heavy);
  // Every top-level library the Python sources name (starters are strings inside the generator's files), less
  // the standard library, the packages' own modules, torch (trace_tensor_shapes imports it itself), the
  // tokenizer libraries the NLP tools use where installed (the agent environment has neither) and statsmodels
  // (the time-series tools alone import it, 1.2 s of CPU that every jail of a stage would pay).
  const sources = [...(await pyFiles(assetPath('tools/py'))), ...(await pyFiles(assetPath('tasks/py/mltoolbench')))];
  const named = new Set<string>();
  for (const f of sources)
    for (const m of (await readFile(f, 'utf8')).matchAll(/^\s*(?:from|import)\s+([A-Za-z_][\w]*)/gm)) named.add(m[1]);
  const std = (
    await execa(pythonEnv('agent').python, ['-c', 'import sys; print(" ".join(sys.stdlib_module_names))'])
  ).stdout.split(' ');
  const own = [
    'mlepipe_tools',
    'mltoolbench',
    'grade',
    'attain',
    'torch',
    'tiktoken',
    'tokenizers',
    'transformers',
    'statsmodels',
  ];
  const libraries = [...named].filter((m) => !std.includes(m) && !own.includes(m));
  assert.ok(libraries.includes('networkx') && libraries.includes('PIL'), libraries.join(' '));
  for (const lib of libraries)
    assert.ok(
      mlab.some((m) => m === lib || m.startsWith(`${lib}.`)),
      `${lib} is imported but not preloaded`,
    );
});

async function pyFiles(dir: string): Promise<string[]> {
  return (await readdir(dir, { recursive: true })).filter((f) => f.endsWith('.py')).map((f) => join(dir, f));
}

test.run();
