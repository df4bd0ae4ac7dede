// The trainer worker's Python test suite (gpu/worker/tests: the loss on
// hand-computed batches, gradients through a tiny Qwen3, checkpoints,
// sampling, and gpu/check.sh --tiny), run in the trainer environment once,
// each of its tests reported as a test here.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { runPytest } from '../../test/pytest.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const python = join(root, '.venv', 'trainer', 'bin', 'python');
const run = existsSync(python)
  ? await runPytest(python, ['gpu/worker/tests'], { cwd: root, timeoutMs: 7 * 60_000 })
  : null;

test('pytest ran gpu/worker/tests to the end in .venv/trainer', () => {
  assert.ok(run, `${python} is missing: run 'bash scripts/setup-python.sh trainer' to create the trainer environment`);
  const summary = run.output.trim().split('\n').at(-1) ?? '';
  if (run.exitCode !== 0) console.log(run.output);
  assert.is(run.exitCode, 0, `pytest gpu/worker/tests failed (${summary})`);
  assert.ok(run.cases.length > 0, `pytest wrote no test cases (${summary})`);
});

for (const c of run?.cases ?? []) {
  test(c.id, () => {
    // A skipped Python test fails here as a skipped uvu test fails the file.
    assert.is(c.outcome, 'passed', c.detail);
  });
}

test.run();
