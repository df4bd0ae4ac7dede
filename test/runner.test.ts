// test/run.mjs itself: a file that crashes or is killed at its time limit still counts the tests it
// finished, names the test it was in, a throwing before hook shows its error, and skipped tests fail a file.
import { execa } from 'execa';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { join } from 'node:path';
import { ROOT, TIME_SCALE } from './helpers.js';

const FIXTURES = join('test', 'fixtures', 'runner');

test('a crashed or killed file counts what it ran and says which test it was in', async () => {
  // Long enough for the hanging file to start and finish its first test, however loaded the machine.
  const limitS = Math.ceil(4 * TIME_SCALE);
  const r = await execa(process.execPath, ['test/run.mjs', join(FIXTURES, 'crash.fixture.ts'), join(FIXTURES, 'hang.fixture.ts')], {
    cwd: ROOT,
    env: { MLEPIPE_TEST_FILE_TIMEOUT_S: String(limitS), MLEPIPE_TEST_TIME_SCALE: String(TIME_SCALE) },
    reject: false,
  });
  const out = String(r.stdout);
  assert.is(r.exitCode, 1, out);
  assert.match(out, /crash\.fixture\.ts {2}\(1\/3 passed/);
  assert.match(out, 'crash.fixture.ts exited early (SIGKILL) in test "kills its own process", after 1 passed and 1 failed');
  assert.match(out, /hang\.fixture\.ts {2}\(1\/3 passed/);
  assert.match(out, `hang.fixture.ts was killed after ${limitS}s (its time limit) in test slow › "hangs", after 1 passed and 1 failed`);
  // uvu 0.5 alone prints nothing for a throwing before hook.
  assert.match(out, /FAIL {2}setup {2}before hook\n {4}Error: the fixture could not start/);
  assert.ok(out.trimEnd().endsWith('\n2 passed, 4 failed'), out);
});

test('a file whose tests pass but some are skipped or left out by .only fails, each of them counted', async () => {
  const r = await execa(process.execPath, ['test/run.mjs', join(FIXTURES, 'skip.fixture.ts')], { cwd: ROOT, env: { MLEPIPE_TEST_TIME_SCALE: String(TIME_SCALE) }, reject: false });
  const out = String(r.stdout);
  assert.is(r.exitCode, 1, out);
  assert.match(out, /skip\.fixture\.ts {2}\(2\/5 passed/);
  assert.match(out, 'skip.fixture.ts skipped 3 tests (test.skip, or left out by a test.only): each counts as failed');
  assert.ok(out.trimEnd().endsWith('\n2 passed, 3 failed'), out);
});

test.run();
