import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { finishStep } from './limits.js';
import { DEFAULT_LIMITS } from './types.js';

test('a step result says what ended it: an interrupt, else running out of memory, else the timeout', () => {
  const limits = { ...DEFAULT_LIMITS, memoryMb: 100, timeoutMs: 2000 };
  const raw = (exitCode: number, stderr = '') => ({
    exitCode,
    stdout: '',
    stderr,
    truncated: false,
    durationMs: 5,
    backend: 'bwrap' as const,
  });
  const traceback = (last: string) =>
    `Traceback (most recent call last):\n  File "x.py", line 1, in <module>\n${last}\n`;
  const oom = finishStep(raw(1, traceback('MemoryError')), limits, {});
  assert.equal([oom.oom, oom.timedOut, oom.exitCode], [true, false, 1]);
  assert.match(
    oom.stderr,
    /MemoryError\n\n\[mlepipe: the step ran out of memory: it went over its memory cap of 100 MB and was stopped\]$/,
  );
  assert.is(
    finishStep(raw(1, traceback('numpy.core._exceptions._ArrayMemoryError: Unable to allocate 6.00 GiB')), limits, {})
      .oom,
    true,
  );
  assert.is(finishStep(raw(0, 'MemoryError caught, carried on'), limits, {}).oom, undefined);
  assert.is(finishStep(raw(1, traceback('ValueError: no MemoryError here')), limits, {}).oom, undefined);
  const killed = finishStep(raw(137), limits, { oomKilled: true, timedOut: true });
  assert.equal([killed.oom, killed.timedOut, killed.exitCode], [true, false, 137]);
  const late = finishStep(raw(137), limits, { timedOut: true });
  assert.equal([late.oom, late.timedOut, late.exitCode], [undefined, true, 124]);
  assert.match(late.stderr, 'killed after its timeout of 2 s');
  const stopped = finishStep(raw(137), limits, { interrupted: true, timedOut: true, oomKilled: true });
  assert.equal([stopped.interrupted, stopped.oom, stopped.timedOut, stopped.exitCode], [true, undefined, false, 130]);
  assert.match(stopped.stderr, '[mlepipe: the step was stopped: the run was interrupted]');
});

test.run();
