// The warm-jails line of an eval node's log is read back as it is written: the quick-start bench's
// jails-per-rollout figure comes from it, and a log without it stops the bench instead of printing null.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { jailsInLogs } from '../../bench/quickstart-jails.js';
import { tmpProject } from '../../test/helpers.js';
import { jailsLine, readJails } from './jails-line.js';

test('the line an eval node logs reads back as its counts, the last one of a log winning', () => {
  const log = [
    'step 1: something else',
    jailsLine({ started: 1, handed: 2, reused: 0, rollouts: 4 }),
    jailsLine({ started: 3, handed: 2, reused: 50, rollouts: 55 }),
    'done',
  ].join('\n');
  assert.equal(readJails(log), { started: 3, handed: 2, reused: 50, rollouts: 55 });
  assert.is(readJails('sandbox: cold sessions only\n'), undefined);
});

test('the bench finds the line among the node logs, and stops with the folder named when none has it', async () => {
  const dir = await tmpProject({});
  const logs = join(dir, 'logs');
  await mkdir(logs);
  await writeFile(join(logs, 'a.log'), 'mlepipe: tasks\n');
  await writeFile(join(logs, 'b.log'), `x\n${jailsLine({ started: 2, handed: 1, reused: 9, rollouts: 12 })}\n`);
  assert.equal(await jailsInLogs(logs), { started: 2, handed: 1, reused: 9, rollouts: 12 });
  await writeFile(join(logs, 'b.log'), 'sandbox: 2 warm jails started for 12 rollouts\n');
  try {
    await jailsInLogs(logs);
    assert.unreachable('a folder without the line must stop the bench');
  } catch (err) {
    assert.match(String(err), logs);
    assert.match(String(err), 'warm-jails line');
  }
});

test.run();
