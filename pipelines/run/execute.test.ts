// How a node's error reaches the user: a bug in a stage keeps its stack in the node log and is called an
// internal error; a failure the stage foresaw stays its one-line message.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { runCommand } from '../../cli/commands/run.js';
import { memoryIO } from '../../cli/io.js';
import { StageFailure } from '../../core/errors.js';
import type { Stage } from '../../stages/contract.js';
import { STAGES } from '../../stages/registry.js';
import { tmpProject } from '../../test/helpers.js';

const shell = STAGES.shell as { run: Stage<unknown>['run'] };
const shellRun = shell.run;

/** Runs a one-node experiment whose shell stage does `work` instead; returns what the user saw and the log. */
async function runWith(work: () => never): Promise<{ code: number; stderr: string; log: string }> {
  const dir = await tmpProject({ 'e.yaml': 'name: bug\nstages:\n  a: { uses: shell, with: { run: "true" } }\n' });
  shell.run = () => Promise.resolve().then(work);
  try {
    const io = memoryIO();
    const code = await runCommand(join(dir, 'e.yaml'), {}, io);
    const stderr = io.stderr.join('\n');
    const logPath = /full log: (\S+)/.exec(stderr)?.[1];
    assert.ok(logPath, stderr);
    return { code, stderr, log: await readFile(logPath, 'utf8') };
  } finally {
    shell.run = shellRun;
  }
}

function readsAMissingField(record: unknown): never {
  // The kind of slip the type checker lets through once a value came from JSON.
  return (record as { missing: { field: never } }).missing.field;
}

test('a TypeError in a stage is an internal error: its stack, down to the throwing function, is in the node log', async () => {
  const r = await runWith(() => readsAMissingField({}));
  assert.is(r.code, 1);
  const message = "TypeError: Cannot read properties of undefined (reading 'field')";
  assert.match(r.stderr, `✖ a: internal error (please report it): ${message}; its stack is in the node log, `);
  assert.match(r.log, `mlepipe: internal error: ${message}\n`);
  assert.match(r.log, /\n {4}at readsAMissingField \(/);
  // The terminal shows where the stack is, not the stack.
  assert.not.match(r.stderr, 'at readsAMissingField');
});

test('a StageFailure stays its one-line message, in the report and in the log, with no stack', async () => {
  const r = await runWith(() => {
    throw new StageFailure('the trainer exited with code 3 (its output is above)');
  });
  assert.is(r.code, 1);
  assert.match(r.stderr, '✖ a: the trainer exited with code 3 (its output is above)\n');
  assert.not.match(r.stderr, 'internal error');
  assert.ok(r.log.endsWith('mlepipe: the trainer exited with code 3 (its output is above)\n'), r.log);
  assert.not.match(r.log, /\n\s+at /);
});

test.run();
