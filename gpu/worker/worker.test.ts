// The trainer worker's Python test suite (gpu/worker/tests: the loss on
// hand-computed batches, gradients through a tiny Qwen3, checkpoints,
// sampling, and gpu/check.sh --tiny), run in the trainer environment.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

const root = fileURLToPath(new URL('../..', import.meta.url));
const python = join(root, '.venv', 'trainer', 'bin', 'python');

test('the worker passes its pytest suite in .venv/trainer', async () => {
  assert.ok(existsSync(python), `${python} is missing: run 'bash scripts/setup-python.sh trainer' to create the trainer environment`);
  const run = await execa(python, ['-m', 'pytest', 'gpu/worker/tests', '-q'], { cwd: root, reject: false, all: true, timeout: 7 * 60_000 });
  const summary = run.all?.trim().split('\n').at(-1) ?? '';
  if (run.exitCode !== 0) console.log(run.all);
  assert.is(run.exitCode, 0, `pytest gpu/worker/tests failed (${summary})`);
  assert.match(summary, /\d+ passed/);
});

test.run();
