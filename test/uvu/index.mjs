// uvu as test files use it, with two additions for test/run.mjs:
// - uvu 0.5 swallows an error thrown by a `before` or `after.each` hook (its
//   runner returns from a `finally`): the suite's tests are counted as not
//   passed with no reason given. Here the error is printed, and the process
//   exits non-zero.
// - uvu prints one mark per finished test but never a test's name, so a file
//   killed at its time limit could not say where it hung. Each test's suite,
//   name and start time are appended to the file MLEPIPE_TEST_TRACE names as
//   it starts.
import { appendFileSync, readFileSync } from 'node:fs';
import * as uvu from 'uvu';

export { exec } from 'uvu';

const TRACE = process.env.MLEPIPE_TEST_TRACE;
let hookFailed = false;
process.on('exit', () => {
  if (hookFailed) process.exitCode = 1;
  // The file's CPU time, its own and that of the processes it waited for (CLI runs, Python), for the runner to print.
  if (TRACE) appendFileSync(TRACE, `${JSON.stringify({ cpu: ownCpuSeconds() })}\n`);
});

function ownCpuSeconds() {
  try {
    const f = readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ');
    // utime, stime, cutime and cstime: fields 14 to 17 of stat(5), in clock ticks (100 a second on Linux).
    return (Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) / 100;
  } catch {
    return null;
  }
}

function guard(suite, hook, fn) {
  return async (ctx) => {
    try {
      await fn(ctx);
    } catch (err) {
      hookFailed = true;
      const where = suite ? ` ${suite} ` : '';
      process.stdout.write(`\n   FAIL ${where} ${hook} hook\n    ${err?.stack ?? err}\n\n`);
      throw err;
    }
  };
}

function traced(suite, name, fn) {
  return (ctx) => {
    if (TRACE) appendFileSync(TRACE, `${JSON.stringify({ suite, test: name, t: Date.now() })}\n`);
    return fn(ctx);
  };
}

function wrap(t, suite) {
  const out = (name, fn) => t(name, traced(suite, name, fn));
  out.only = (name, fn) => t.only(name, traced(suite, name, fn));
  out.skip = t.skip;
  out.run = t.run;
  out.before = (fn) => t.before(guard(suite, 'before', fn));
  // A throwing before.each is already reported by uvu as the test's failure.
  out.before.each = t.before.each;
  out.after = (fn) => t.after(guard(suite, 'after', fn));
  out.after.each = (fn) => t.after.each(guard(suite, 'after.each', fn));
  return out;
}

export const suite = (name = '', state) => wrap(uvu.suite(name, state), name);
export const test = wrap(uvu.test, '');
