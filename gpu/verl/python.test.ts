// The verl agent loop's Python tests (gpu/verl/tests: the token record under
// real chat templates, and verl's own post-processing of the loop's outputs),
// run with unittest in the pinned verl environment.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

const root = fileURLToPath(new URL('../..', import.meta.url));
const python = join(root, '.venv', 'verl', 'bin', 'python');

test('the verl agent loop passes its Python tests in .venv/verl', async () => {
  assert.ok(
    existsSync(python),
    `${python} is missing: run 'bash scripts/setup-python.sh verl' to create the verl environment`,
  );
  const run = await execa(python, ['-m', 'unittest', 'discover', '-s', 'gpu/verl/tests', '-t', 'gpu/verl/tests'], {
    cwd: root,
    reject: false,
    all: true,
    timeout: 7 * 60_000,
  });
  const tail = run.all?.trim().split('\n').slice(-3).join(' ') ?? '';
  if (run.exitCode !== 0) console.log(run.all);
  assert.is(run.exitCode, 0, `unittest gpu/verl/tests failed (${tail})`);
  assert.match(tail, /Ran \d+ tests?/);
});

test.run();
