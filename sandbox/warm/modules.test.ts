// What a warm jail imports, and when: the default preload leaves out the modules
// imported on first use (torch, XGBoost), and once a step of the jail has
// imported one, the server imports it too, so that the jail's later steps
// start with it loaded. Only those modules: another that a step imported is
// not carried over. A real bwrap jail over the agent environment, which has torch.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { envInstalled, pythonEnv } from '../../core/python.js';
import { createSandbox } from '../index.js';
import { DEFAULT_WARM_MODULES, ON_FIRST_USE, onFirstUse } from './modules.js';

const AGENT = pythonEnv('agent');

test('the default preload imports torch and XGBoost only on first use', () => {
  for (const m of ON_FIRST_USE) assert.not.ok(DEFAULT_WARM_MODULES.includes(m), m);
  assert.equal(onFirstUse(DEFAULT_WARM_MODULES), ['xgboost', 'torch']);
  // A list that preloads torch (the project's sandbox.preload) imports it at start, not later.
  assert.equal(onFirstUse([...DEFAULT_WARM_MODULES, 'torch']), ['xgboost']);
});

test('a jail imports torch once a step has: its next steps start with it loaded, and nothing else a step imported', async () => {
  assert.ok(envInstalled(AGENT), `the agent environment is not installed: ${AGENT.fix}`);
  const task = await mkdtemp(join(tmpdir(), 'mlepipe-later-'));
  await mkdir(join(task, 'public'));
  const sandbox = createSandbox({
    backend: 'bwrap',
    warm: true,
    python: AGENT.python,
    poolSize: 1,
    warn: (m) => assert.unreachable(m),
  });
  const session = await sandbox.open({ task });
  try {
    assert.is(session.backend, 'warm-bwrap');
    const step = async (code: string) => {
      await writeFile(join(session.workspace, 's.py'), code);
      const r = await session.run({ file: 's.py' });
      assert.is(r.exitCode, 0, r.stderr);
      return r.stdout.trim();
    };
    // The server imports with the garbage collector off; steps get it back on, after the preload and after torch.
    const loaded =
      "import gc, sys; print(*('torch' in sys.modules, 'sqlite3' in sys.modules, 'sklearn' in sys.modules, gc.isenabled()))";
    assert.is(await step(loaded), 'False False True True', 'preloaded: scikit-learn, not torch');
    assert.is(await step('import torch, sqlite3; print(torch.tensor([2]).item())'), '2');
    assert.is(await step(loaded), 'True False True True', 'torch came with the jail this time; sqlite3 did not');
  } finally {
    await session.close();
    await sandbox.shutdown();
  }
});

test.run();
