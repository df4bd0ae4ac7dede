// Runs every *.test.ts file in its own Node process (two at a time by
// default), prints each file's uvu output, and ends with one line
// `N passed, N failed` for humans and CI alike. Optional arguments filter
// files by substring; --layer unit|fixture|e2e (comma-separated for several) runs the files of those layers
// only (test/lanes.mjs says which file is in which). With --checks the static checks of scripts/checks.mjs
// (type-check, linters) run in the same lanes, each counted as one test.
//
// A file with skipped tests fails: each test `.skip` or `.only` left out counts as one failure.
//
// A file that is killed at its time limit or crashes still counts the tests
// it finished (uvu prints a mark per test: `•` passed, `✘` failed), the test
// it was in counts as one failure, and the runner names that test (from the
// trace test/uvu/index.mjs writes as each test starts).
import { spawn } from 'node:child_process';
import {
  accessSync,
  constants,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statfsSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pick, prepare, runCheck } from '../scripts/checks.mjs';
import { layerOf, pickLayers } from './lanes.mjs';
import { timeScale } from './time-scale.mjs';

const ROOTS = [
  'core',
  'pipelines',
  'stages',
  'cli',
  'sandbox',
  'tasks',
  'agents',
  'tools',
  'seeds',
  'gpu',
  'test',
].filter((d) => existsSync(d));
// Arguments: substrings of test file paths, or paths of files to run as they are. --checks adds the static
// checks (scripts/checks.mjs), --checks=NAME,... some of them, by name or group; they then share the lanes
// with the files: `npm test` runs the suite that way.
let layers;
let args;
try {
  ({ layers, rest: args } = pickLayers(process.argv.slice(2)));
} catch (err) {
  console.error(`test runner: ${err.message}`);
  process.exit(2);
}
const checkArgs = args.filter((a) => a === '--checks' || a.startsWith('--checks='));
let checks = [];
try {
  checks = checkArgs.flatMap((a) =>
    pick(a === '--checks' ? [] : a.slice('--checks='.length).split(',').filter(Boolean)),
  );
} catch (err) {
  console.error(`test runner: ${err.message}`);
  process.exit(2);
}
const filters = args.filter((a) => !checkArgs.includes(a));
const jobs = Number(process.env.MLEPIPE_TEST_JOBS ?? Math.min(2, cpus().length));
// One factor for the whole run, handed to every file so that they agree.
const scale = timeScale();
const perFileTimeoutMs = Number(process.env.MLEPIPE_TEST_FILE_TIMEOUT_S ?? 480 * scale) * 1000;
// Files slower than this list their slowest tests.
const SLOW_FILE_S = 30;
const traceDir = mkdtempSync(join(tmpdir(), 'mlepipe-test-trace-'));

const TMPFS_MAGIC = 0x01021994;
const GiB = 1024 ** 3;
/**
 * Where each file's temp folder goes (its projects, caches, workspaces and jails' slots): MLEPIPE_TEST_TMP
 * when set, else /dev/shm when it is a writable tmpfs with 8 GiB free, else the system's temp folder. The
 * suite writes and deletes tens of thousands of small files (task folders, images, cache items): on this
 * machine's disk (ext4 mounted with discard) each created file cost about 0.1 ms of kernel time, and the
 * MLToolBench fault check alone spent 10.6 CPU-s in the kernel there against 1.3 on tmpfs. The files are
 * the same either way; only the kernel's work to keep them differs.
 */
function tempRoot() {
  if (process.env.MLEPIPE_TEST_TMP) return process.env.MLEPIPE_TEST_TMP;
  try {
    const fs = statfsSync('/dev/shm');
    accessSync('/dev/shm', constants.W_OK | constants.X_OK);
    if (fs.type === TMPFS_MAGIC && fs.bavail * fs.bsize >= 8 * GiB) return '/dev/shm';
  } catch {
    // no /dev/shm here
  }
  return tmpdir();
}
const TEMP_ROOT = tempRoot();
// Task entries (generated tasks, their filter, MLToolBench suites) that files opting in share through
// test/shared-tasks.ts: one file builds a key, the others copy it. Removed at the end of the run.
const SHARED_TASKS = mkdtempSync(join(TEMP_ROOT, 'mlt-tasks-'));
// Compiled TypeScript (test/ts/hooks.mjs), one folder for the whole run and the next: each file starts from
// the modules the files before it compiled instead of compiling every import again.
const TS_CACHE = join(tmpdir(), `mlepipe-test-ts-${process.geteuid?.() ?? 'user'}`);
// One thread per numeric library (torch, numpy, sklearn) unless the caller chose a number: files run two at a time,
// each with its CLI, a worker or a jail beside it, on cores other people share. A second OpenMP thread then
// finds no free core and busy-waits for it: the tiny models' steps took 25 times the CPU time and 20 times
// the wall time of one thread on a loaded 2-core machine, and slowed the other lane as well.
const THREADS = Object.fromEntries(
  ['OMP_NUM_THREADS', 'MKL_NUM_THREADS', 'OPENBLAS_NUM_THREADS'].map((k) => [k, process.env[k] || '1']),
);

function find(dir) {
  let out = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (name === 'node_modules' || name.startsWith('.')) continue;
    if (statSync(p).isDirectory()) out = out.concat(find(p));
    else if (name.endsWith('.test.ts')) out.push(p);
  }
  return out;
}

const named = filters.filter((f) => f.endsWith('.ts') && existsSync(f) && statSync(f).isFile());
// How long each file took last time on this machine, else in the reference run kept beside this runner
// (test/durations.json: a fresh machine has no times of its own, and in name order the slowest files may
// come last and run on after the rest have finished). The slowest start first, so that two long files do not end
// up running one after the other at the end. A file under test/ never timed (fixture and end-to-end tests: one
// may take minutes) starts before all of them: the lanes can only end apart by the length of the last file
// either one started, so the files of unknown length go where their length cannot unbalance the end. A
// never-timed unit file beside the code takes a second or less and comes last.
const TIMES = join(tmpdir(), 'mlepipe-test-times.json');
const readTimes = (file) => {
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    return {};
  }
};
const DURATIONS = fileURLToPath(new URL('./durations.json', import.meta.url));
const DURATIONS_ABOUT =
  'Seconds each test file and static check (check:NAME) took in a whole run of test/run.mjs --checks, two at a time on the 2-core machine; the runner starts the slowest first. MLEPIPE_TEST_DURATIONS=write node test/run.mjs --checks refreshes it.';
const lastTimes = { ...readTimes(DURATIONS).seconds, ...readTimes(TIMES) };
// The checks take their place among the files by their last times; one never timed is taken to be as slow
// as the slowest check usually is, so that it does not wait for the end of the run.
const CHECK_GUESS_S = 20;
/** The seconds a file or check (`check:NAME`) is expected to take, for the order the lanes take them in. */
function expectedS(key) {
  if (lastTimes[key] !== undefined) return lastTimes[key];
  if (key.startsWith('check:')) return CHECK_GUESS_S;
  return layerOf(key) === 'unit' ? -1 : 1e6;
}
const files = [
  ...new Set([
    ...named,
    ...ROOTS.flatMap((r) => find(r)).filter((f) => !filters.length || filters.some((x) => f.includes(x))),
  ]),
]
  .filter((f) => !layers || layers.has(layerOf(f)))
  .sort((a, b) => Number(!a.startsWith('test')) - Number(!b.startsWith('test')) || a.localeCompare(b))
  .sort((a, b) => expectedS(b) - expectedS(a));

/**
 * Counts from uvu's output: its summary when it got that far, else each finished suite's `(passed / total)`
 * plus the marks of the suite it stopped in (written one after another on the suite's line: `name  • • ✘ `).
 */
function countTests(stdout) {
  const total = /^\s*Total:\s+(\d+)/m.exec(stdout);
  const passed = /^\s*Passed:\s+(\d+)/m.exec(stdout);
  // uvu counts `.skip` tests and those `.only` left out as skipped; neither ran, so neither may pass quietly.
  const skipped = /^\s*Skipped:\s+(\d+)/m.exec(stdout);
  if (total && passed)
    return {
      complete: true,
      passed: Number(passed[1]),
      failed: Number(total[1]) - Number(passed[1]),
      skipped: Number(skipped?.[1] ?? 0),
    };
  const c = { complete: false, passed: 0, failed: 0, skipped: 0 };
  const suites = [...stdout.matchAll(/\((\d+) \/ (\d+)\)\n/g)];
  for (const m of suites) {
    c.passed += Number(m[1]);
    c.failed += Number(m[2]) - Number(m[1]);
  }
  const marks =
    stdout
      .slice(suites.length ? suites[suites.length - 1].index + suites[suites.length - 1][0].length : 0)
      .match(/[•✘](?= )/g) ?? [];
  c.passed += marks.filter((m) => m === '•').length;
  c.failed += marks.filter((m) => m === '✘').length;
  return c;
}

/** The trace test/uvu/index.mjs writes: a line per test as it starts, and the file's CPU seconds at exit. */
function readTrace(trace) {
  return existsSync(trace)
    ? readFileSync(trace, 'utf8')
        .trim()
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l))
    : [];
}
/** Tests in the order they started. */
const started = (trace) => readTrace(trace).filter((x) => 'test' in x);
/** The file's CPU seconds, when it exited normally. */
const cpuOf = (trace) => readTrace(trace).find((x) => 'cpu' in x)?.cpu ?? null;

const testName = ({ suite, test }) => (suite ? `${suite} › "${test}"` : `"${test}"`);

/** The test a file was in when it stopped: the last one started, if it has no mark yet. */
function inProgress(tests, stdout) {
  const marked = (stdout.match(/[•✘](?= )/g) ?? []).length;
  return tests.length > marked ? testName(tests[tests.length - 1]) : null;
}

/** A slow file's three slowest tests (a test lasts until the next one starts), to show where its time goes. */
function slowest(tests, endedAt) {
  const spans = tests.map((t, i) => ({ name: testName(t), s: ((tests[i + 1]?.t ?? endedAt) - t.t) / 1000 }));
  return spans
    .sort((a, b) => b.s - a.s)
    .slice(0, 3)
    .map((x) => `${x.name} ${x.s.toFixed(1)}s`)
    .join(', ');
}

const REGISTER = fileURLToPath(new URL('./uvu/register.mjs', import.meta.url));
const TYPESCRIPT = fileURLToPath(new URL('./ts/register.mjs', import.meta.url));
const UNIT_GUARD = fileURLToPath(new URL('./unit-guard.mjs', import.meta.url));
const running = new Set();
const killGroup = (child) => {
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {
    // already gone
  }
};
// The files run in process groups of their own: Ctrl-C at the terminal reaches only this runner.
for (const sig of ['SIGINT', 'SIGTERM']) {
  process.on(sig, () => {
    for (const child of running) killGroup(child);
    rmSync(traceDir, { recursive: true, force: true });
    rmSync(SHARED_TASKS, { recursive: true, force: true });
    process.exit(130);
  });
}

/** A passed file's temp folder; what cannot be removed (another user's files) is left and said. */
function removeTemp(dir) {
  try {
    rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
  } catch (err) {
    process.stdout.write(`[test runner] could not remove ${dir}: ${err.message}\n`);
  }
}

let passed = 0;
let failed = 0;
const times = {};
const t0 = Date.now();
/**
 * CPU seconds (user + system) of this runner's finished descendants, from /proc: each process adds its
 * waited-for children's time to its own, so a file's CLI runs and Python processes count once they exit.
 * Work done by daemons (dockerd's containers) is not in it. Wall time depends on the machine's other load;
 * this is the figure to compare between runs.
 */
function childCpuSeconds() {
  try {
    const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ');
    // cutime and cstime are fields 16 and 17 of stat(5), counted from 1 with the pid and the name before ') '.
    return (Number(fields[13]) + Number(fields[14])) / 100;
  } catch {
    return 0;
  }
}
const cpu0 = childCpuSeconds();

function runFile(file, index) {
  return new Promise((resolve) => {
    const startedAt = Date.now();
    const trace = join(traceDir, `${index}.jsonl`);
    // The load when this file starts counts too: a suite that started on a quiet machine may not end on one.
    const fileScale = process.env.MLEPIPE_TEST_TIME_SCALE ? scale : Math.max(scale, timeScale());
    // Its own process group, so that a kill reaches the CLI runs and jails a test started too.
    // Its own temp folder (projects, workspaces, keys), removed when the file passes and kept for a look when it fails.
    const temp = mkdtempSync(join(TEMP_ROOT, 'mlt-'));
    // Source maps: a failure's stack names lines of the TypeScript, not of its compiled form.
    const child = spawn(
      process.execPath,
      [
        '--enable-source-maps',
        '--import',
        TYPESCRIPT,
        '--import',
        REGISTER,
        ...(layerOf(file) === 'unit' ? ['--import', UNIT_GUARD] : []),
        file,
      ],
      {
        env: {
          ...process.env,
          ...THREADS,
          NO_COLOR: '1',
          FORCE_COLOR: '0',
          MLEPIPE_TEST_TIME_SCALE: String(fileScale),
          MLEPIPE_TEST_TRACE: trace,
          MLEPIPE_TEST_TS_CACHE: TS_CACHE,
          MLEPIPE_TEST_SHARED_TASKS: SHARED_TASKS,
          TMPDIR: temp,
        },
        stdio: ['ignore', 'pipe', 'pipe'],
        detached: true,
      },
    );
    running.add(child);
    let out = '';
    let stdout = '';
    let killed = false;
    child.stdout.on('data', (d) => {
      out += d;
      stdout += d;
    });
    child.stderr.on('data', (d) => (out += d));
    const timer = setTimeout(() => {
      killed = true;
      killGroup(child);
    }, perFileTimeoutMs);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      running.delete(child);
      // Whatever the file started and left running in its group goes with it.
      killGroup(child);
      const c = countTests(stdout);
      const tests = started(trace);
      let note = '';
      if (!c.complete) {
        const at = inProgress(tests, stdout);
        const how = killed
          ? `was killed after ${perFileTimeoutMs / 1000}s (its time limit)`
          : `exited early (${signal ?? `code ${code}`})`;
        note = `\n[test runner] ${file} ${how}${at ? ` in test ${at}` : ''}, after ${c.passed} passed and ${c.failed} failed\n`;
        // The test it was in failed; a file that ended with nothing failed counts as one failure.
        if (at || c.failed === 0) c.failed += 1;
      } else if (c.skipped) {
        note = `\n[test runner] ${file} skipped ${c.skipped} test${c.skipped === 1 ? '' : 's'} (test.skip, or left out by a test.only): each counts as failed, a file passes only when every test in it runs\n`;
        c.failed += c.skipped;
      } else if (c.failed === 0 && (code !== 0 || c.passed === 0)) {
        note = `\n[test runner] ${file} ${c.passed ? `exited with ${signal ?? `code ${code}`} after its tests passed` : 'ran no tests'}\n`;
        c.failed += 1;
      }
      if (c.failed) note += `[test runner] ${file}: its temp files are kept in ${temp}\n`;
      else removeTemp(temp);
      passed += c.passed;
      failed += c.failed;
      const secs = (Date.now() - startedAt) / 1000;
      times[file] = secs;
      const body = c.failed
        ? out + note
        : out
            .split('\n')
            .filter((l) => /✘|FAIL/.test(l))
            .join('\n');
      const slow = secs > SLOW_FILE_S && tests.length > 1 ? `   slowest: ${slowest(tests, Date.now())}\n` : '';
      const cpu = cpuOf(trace);
      process.stdout.write(
        `\n── ${relative('.', file)}  (${c.passed}/${c.passed + c.failed} passed, ${secs.toFixed(1)}s${cpu === null ? '' : `, ${cpu.toFixed(1)}s CPU`})\n${slow}${body}`,
      );
      resolve();
    });
  });
}

/**
 * One static check in a lane, like a file: its output is shown when it fails, and it counts as one test
 * passed or failed. It has a file's time limit too.
 */
async function runStatic(check) {
  const startedAt = Date.now();
  let current;
  let killed = false;
  const timer = setTimeout(() => {
    killed = true;
    if (current) killGroup(current);
  }, perFileTimeoutMs);
  const r = await runCheck(check, {
    env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' },
    onStart: (child) => {
      current = child;
      running.add(child);
      child.on('close', () => running.delete(child));
    },
  });
  clearTimeout(timer);
  const secs = (Date.now() - startedAt) / 1000;
  times[`check:${check.name}`] = secs;
  if (r.ok) passed++;
  else failed++;
  const note = killed
    ? `[test runner] check ${check.name} was killed after ${perFileTimeoutMs / 1000}s (its time limit)\n`
    : '';
  process.stdout.write(
    `\n── check ${check.name}  (${r.ok ? 'passed' : 'FAILED'}, ${secs.toFixed(1)}s)\n${r.ok ? '' : r.out + note}`,
  );
}

if (checks.length) prepare();
const queue = [
  ...files.map((f, i) => ({ key: f, run: () => runFile(f, i) })),
  ...[...new Set(checks)].map((c) => ({ key: `check:${c.name}`, run: () => runStatic(c) })),
].sort((a, b) => expectedS(b.key) - expectedS(a.key));
await Promise.all(
  Array.from({ length: Math.max(1, jobs) }, async () => {
    while (queue.length) await queue.shift().run();
  }),
);
rmSync(traceDir, { recursive: true, force: true });
rmSync(SHARED_TASKS, { recursive: true, force: true });
try {
  writeFileSync(TIMES, JSON.stringify({ ...readTimes(TIMES), ...times }));
} catch {
  // only an ordering hint
}
// `MLEPIPE_TEST_DURATIONS=write node test/run.mjs` refreshes the reference times after a whole run.
if (process.env.MLEPIPE_TEST_DURATIONS === 'write' && !filters.length && !layers) {
  const seconds = Object.fromEntries(
    Object.entries(times)
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([f, t]) => [f, Math.round(t * 10) / 10]),
  );
  writeFileSync(DURATIONS, `${JSON.stringify({ about: DURATIONS_ABOUT, seconds }, null, 1)}\n`);
}
const cpu = childCpuSeconds() - cpu0;
process.stdout.write(
  `\n${files.length} test files${checks.length ? ` and ${new Set(checks).size} static check${new Set(checks).size === 1 ? '' : 's'}` : ''} in ${((Date.now() - t0) / 1000).toFixed(1)}s (time scale ${scale}), ${cpu.toFixed(0)} CPU seconds in their processes; temp folders in ${TEMP_ROOT}\n`,
);
console.log(`${passed} passed, ${failed} failed`);
process.exitCode = failed ? 1 : 0;
