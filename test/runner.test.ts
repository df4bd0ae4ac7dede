// test/run.mjs itself: a file that crashes or is killed at its time limit still counts the tests it
// finished, names the test it was in, a throwing before hook shows its error, and skipped tests fail a file;
// the static checks (scripts/checks.mjs) run in its lanes and count as tests.
import { execa } from 'execa';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT, TIME_SCALE } from './helpers.js';
import { CHECKS, pick, runCheck } from '../scripts/checks.mjs';
import { pytestCases } from './pytest.js';
import { E2E, layerOf, pickLayers } from './lanes.mjs';

const FIXTURES = join('test', 'fixtures', 'runner');

/**
 * The runner on `args` with its temp root inside this file's own temp folder: a failing fixture's folder is
 * kept by design, and in the machine's shared root (/dev/shm) it outlived this file's run.
 */
async function nestedRun(args: string[], env: Record<string, string> = {}) {
  const root = await mkdtemp(join(tmpdir(), 'mlepipe-runner-tmp-'));
  const r = await execa(process.execPath, ['test/run.mjs', ...args], {
    cwd: ROOT,
    env: { MLEPIPE_TEST_TMP: root, MLEPIPE_TEST_TIME_SCALE: String(TIME_SCALE), ...env },
    reject: false,
  });
  return { ...r, root };
}

test('a crashed or killed file counts what it ran and says which test it was in', async () => {
  // Long enough for the hanging file to start and finish its first test, however loaded the machine.
  const limitS = Math.ceil(4 * TIME_SCALE);
  const r = await nestedRun([join(FIXTURES, 'crash.fixture.ts'), join(FIXTURES, 'hang.fixture.ts')], {
    MLEPIPE_TEST_FILE_TIMEOUT_S: String(limitS),
  });
  const out = String(r.stdout);
  assert.is(r.exitCode, 1, out);
  assert.match(out, /crash\.fixture\.ts {2}\(1\/3 passed/);
  assert.match(
    out,
    'crash.fixture.ts exited early (SIGKILL) in test "kills its own process", after 1 passed and 1 failed',
  );
  assert.match(out, /hang\.fixture\.ts {2}\(1\/3 passed/);
  assert.match(
    out,
    `hang.fixture.ts was killed after ${limitS}s (its time limit) in test slow › "hangs", after 1 passed and 1 failed`,
  );
  // uvu 0.5 alone prints nothing for a throwing before hook.
  assert.match(out, /FAIL {2}setup {2}before hook\n {4}Error: the fixture could not start/);
  assert.ok(out.trimEnd().endsWith('\n2 passed, 4 failed'), out);
  // Each failed file's temp folder is kept, under the temp root, and named in the output.
  const kept = await readdir(r.root);
  assert.is(kept.length, 2, kept.join(' '));
  for (const k of kept) assert.match(out, `: its temp files are kept in ${join(r.root, k)}\n`);
});

test('a file whose tests pass but some are skipped or left out by .only fails, each of them counted', async () => {
  const r = await nestedRun([join(FIXTURES, 'skip.fixture.ts')]);
  const out = String(r.stdout);
  assert.is(r.exitCode, 1, out);
  assert.match(out, /skip\.fixture\.ts {2}\(2\/5 passed/);
  assert.match(out, 'skip.fixture.ts skipped 3 tests (test.skip, or left out by a test.only): each counts as failed');
  assert.ok(out.trimEnd().endsWith('\n2 passed, 3 failed'), out);
});

test("MLEPIPE_TEST_TMP holds each file's temp folder, the summary says so, and a passing file's folder is removed", async () => {
  const { root, ...r } = await nestedRun([join(FIXTURES, 'tmp.fixture.ts')]);
  const out = String(r.stdout);
  assert.is(r.exitCode, 0, out);
  assert.match(out, `; temp folders in ${root}\n`);
  assert.ok(out.trimEnd().endsWith('\n1 passed, 0 failed'), out);
  assert.equal(await readdir(root), []);
});

test('--checks=NAME runs a static check in a lane beside the files, counted as one test; an unknown name is refused before anything runs', async () => {
  const r = await nestedRun(['--checks=ruff', join(FIXTURES, 'skip.fixture.ts')]);
  const out = String(r.stdout);
  assert.match(out, /── check ruff {2}\(passed, [\d.]+s\)/);
  assert.match(out, /\n1 test files and 1 static check in /);
  // The fixture's 2 passed and 3 skipped, and the check.
  assert.ok(out.trimEnd().endsWith('\n3 passed, 3 failed'), out);
  const bad = await nestedRun(['--checks=ruff,nonesuch', join(FIXTURES, 'skip.fixture.ts')]);
  assert.is(bad.exitCode, 2, String(bad.stdout));
  assert.match(
    String(bad.stderr),
    'test runner: no check or group named nonesuch (checks: tsc, eslint, prettier, ruff, mypy-worker, mypy-tools;',
  );
  assert.not.match(String(bad.stdout), 'skip.fixture');
});

test('a failing check gives its output and the command that failed, and the commands after it do not run; a tool that is not installed says how to get it', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'mlepipe-check-'));
  const after = join(dir, 'after');
  const failing = {
    name: 'lint-x',
    group: 'lint:ts',
    commands: [
      [process.execPath, '-e', 'console.log("x.ts:1:1 one problem"); process.exit(3)'],
      [process.execPath, '-e', `require('fs').writeFileSync(${JSON.stringify(after)}, '')`],
    ],
  };
  const r = await runCheck(failing);
  assert.is(r.ok, false);
  assert.match(r.out, 'x.ts:1:1 one problem');
  assert.match(r.out, `[lint-x] ${process.execPath} -e`);
  assert.match(r.out, 'exited with code 3');
  assert.not.ok(existsSync(after), 'the second command ran after the first failed');
  const missing = await runCheck({ name: 'm', group: 'lint:py', commands: [[join(dir, 'no-such-tool'), 'check']] });
  assert.equal(
    [missing.ok, missing.out.includes(`${join(dir, 'no-such-tool')} is missing: run scripts/setup.sh`)],
    [false, true],
  );
  const passing = await runCheck({
    name: 'p',
    group: 'lint:ts',
    commands: [[process.execPath, '-e', `require('fs').writeFileSync(${JSON.stringify(after)}, '')`]],
  });
  assert.equal([passing.ok, existsSync(after)], [true, true]);
});

test('checks are named by name or group: lint is both halves, typecheck is tsc, none is all of them', () => {
  assert.equal(
    pick(['lint']).map((c) => c.name),
    CHECKS.filter((c) => c.group !== 'typecheck').map((c) => c.name),
  );
  assert.equal(
    pick(['typecheck']).map((c) => c.name),
    ['tsc'],
  );
  assert.equal(
    pick(['lint:py', 'prettier']).map((c) => c.name),
    ['ruff', 'mypy-worker', 'mypy-tools', 'prettier'],
  );
  assert.is(pick([]).length, CHECKS.length);
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
    {
      id: 'test_s::test_bad',
      outcome: 'failed',
      detail: 'AssertionError: one <is> not two\nassert 1 == 2\ntest_s.py:3: AssertionError',
    },
    { id: 'test_s::test_skip', outcome: 'skipped', detail: 'no gpu\n/tmp/test_s.py:4: no gpu' },
    { id: 'pkg.test_p::test_p[q"]', outcome: 'passed' },
  ]);
  assert.equal(pytestCases(''), []);
});

test('a file is a unit beside the code, end-to-end in a named folder of test/, else a fixture; --layer picks layers', () => {
  assert.equal(
    ['core/fs.test.ts', 'test/e2e/run.test.ts', 'test/fixtures/core/proc.test.ts', 'test/tasks/factory.test.ts'].map(
      layerOf,
    ),
    ['unit', 'e2e', 'fixture', 'fixture'],
  );
  assert.equal(layerOf('test/runner.test.ts'), 'fixture');
  for (const dir of E2E) assert.is(layerOf(`test/${dir}/x.test.ts`), 'e2e');
  assert.equal(pickLayers(['--layer', 'unit,fixture', 'core/']), {
    layers: new Set(['unit', 'fixture']),
    rest: ['core/'],
  });
  assert.equal(pickLayers(['--layer=e2e', '--checks']), { layers: new Set(['e2e']), rest: ['--checks'] });
  assert.equal(pickLayers(['core/']), { layers: undefined, rest: ['core/'] });
  assert.throws(() => pickLayers(['--layer', 'units']), /--layer takes unit, fixture, e2e, comma-separated; got units/);
});

test('a unit test that starts a process fails, even when it catches the error', async () => {
  const guard = join(ROOT, 'test', 'unit-guard.mjs');
  const script = `import { spawnSync } from 'node:child_process'; try { spawnSync('true'); } catch {} console.log('went on');`;
  const r = await execa(process.execPath, ['--import', guard, '--input-type=module', '-e', script], { reject: false });
  assert.is(r.exitCode, 1);
  assert.match(String(r.stdout), 'went on');
  assert.match(
    String(r.stderr),
    '[unit guard] a unit test may not start a process (true): move the test file under test/',
  );
  const spawned = await execa(
    process.execPath,
    ['--import', guard, '--input-type=module', '-e', `import { spawn } from 'node:child_process'; spawn('true');`],
    { reject: false },
  );
  assert.is(spawned.exitCode, 1);
  assert.match(String(spawned.stderr), 'a unit test may not start a process (true)');
});

test('a file under test/ never timed starts before the timed ones: one of unknown length does not end the run alone', async () => {
  // The runner keeps this machine's times in its temp folder, which is this file's: one file timed, one not.
  const timed = join(FIXTURES, 'skip.fixture.ts');
  const untimed = join(FIXTURES, 'tmp.fixture.ts');
  await writeFile(join(tmpdir(), 'mlepipe-test-times.json'), JSON.stringify({ [timed]: 100 }));
  const r = await nestedRun([timed, untimed], { MLEPIPE_TEST_JOBS: '1' });
  const out = String(r.stdout);
  const at = (f: string) => out.indexOf(`── ${f}  (`);
  assert.ok(at(untimed) >= 0 && at(timed) >= 0, out);
  assert.ok(at(untimed) < at(timed), out);
});

test.run();
