// test/run.mjs itself: a file that crashes or is killed at its time limit still counts the tests it
// finished, names the test it was in, a throwing before hook shows its error, and skipped tests fail a file.
import { execa } from 'execa';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtemp, readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT, TIME_SCALE } from './helpers.js';
import { pytestCases } from './pytest.js';

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

test("MLEPIPE_TEST_TMP holds each file's temp folder, the summary says so, and a passing file's folder is removed", async () => {
  const root = await mkdtemp(join(tmpdir(), 'mlepipe-runner-tmp-'));
  const r = await execa(process.execPath, ['test/run.mjs', join(FIXTURES, 'tmp.fixture.ts')], { cwd: ROOT, env: { MLEPIPE_TEST_TMP: root, MLEPIPE_TEST_TIME_SCALE: String(TIME_SCALE) }, reject: false });
  const out = String(r.stdout);
  assert.is(r.exitCode, 0, out);
  assert.match(out, `; temp folders in ${root}\n`);
  assert.ok(out.trimEnd().endsWith('\n1 passed, 0 failed'), out);
  assert.equal(await readdir(root), []);
});

test("a pytest report gives one case per Python test, with a failure's or skip's message", () => {
  // As pytest 8 writes it for a pass, a failure, a skip and a parametrised id with a quote in it.
  const xml = `<?xml version="1.0" encoding="utf-8"?><testsuites name="pytest tests"><testsuite name="pytest" errors="0" failures="1" skipped="1" tests="4">\
<testcase classname="test_s" name="test_ok" time="0.001" /><testcase classname="test_s" name="test_bad" time="0.001">\
<failure message="AssertionError: one &lt;is&gt; not two&#10;assert 1 == 2">test_s.py:3: AssertionError</failure></testcase>\
<testcase classname="test_s" name="test_skip" time="0.000"><skipped type="pytest.skip" message="no gpu">/tmp/test_s.py:4: no gpu</skipped></testcase>\
<testcase classname="pkg.test_p" name="test_p[q&quot;]" time="0.000" /></testsuite></testsuites>`;
  assert.equal(pytestCases(xml), [
    { id: 'test_s::test_ok', outcome: 'passed' },
    { id: 'test_s::test_bad', outcome: 'failed', detail: 'AssertionError: one <is> not two\nassert 1 == 2\ntest_s.py:3: AssertionError' },
    { id: 'test_s::test_skip', outcome: 'skipped', detail: 'no gpu\n/tmp/test_s.py:4: no gpu' },
    { id: 'pkg.test_p::test_p[q"]', outcome: 'passed' },
  ]);
  assert.equal(pytestCases(''), []);
});

test.run();
