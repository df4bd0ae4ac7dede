import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execa } from 'execa';
import { fileURLToPath } from 'node:url';
import { waitAtMost } from './proc.js';

const PROC = fileURLToPath(new URL('./proc.ts', import.meta.url));

test('waitAtMost: a process whose promise has settled exits at once, without waiting out the limit', async () => {
  // With the 10-minute timer left pending, the process would live on until the guard below kills it.
  const code = `const { waitAtMost } = await import(${JSON.stringify(PROC)}); await waitAtMost(Promise.resolve(), 600_000); await waitAtMost(Promise.reject(new Error('x')).catch(() => {}), 600_000); console.log('settled');`;
  const r = await execa(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], {
    reject: false,
    timeout: 60_000,
  });
  assert.is(r.timedOut, false, 'still running at the guard: a timer was left');
  assert.is(r.exitCode, 0, r.stderr);
  assert.is(r.stdout.trim(), 'settled');
});

test('waitAtMost: a promise that never settles is given up on after the limit', async () => {
  let done = false;
  await waitAtMost(new Promise(() => {}), 20).then(() => (done = true));
  assert.ok(done);
});

test.run();
