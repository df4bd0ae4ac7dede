// uvu as test files use it, with two additions for test/run.mjs:
// - uvu 0.5 swallows an error thrown by a `before` or `after.each` hook (its
//   runner returns from a `finally`): the suite's tests are counted as not
//   passed with no reason given. Here the error is printed, and the process
//   exits non-zero.
// - uvu prints one mark per finished test but never a test's name, so a file
//   killed at its time limit could not say where it hung. Each test's suite,
//   name and start time are appended to the file MLEPIPE_TEST_TRACE names as
//   it starts.
import { appendFileSync } from 'node:fs';
import * as uvu from 'uvu';

export { exec } from 'uvu';

const TRACE = process.env.MLEPIPE_TEST_TRACE;
let hookFailed = false;
process.on('exit', () => {
  if (hookFailed) process.exitCode = 1;
});

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
