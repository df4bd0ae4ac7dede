// kill -9 of the CLI: what it started (shell commands and their background
// children, jailed steps, containers) dies with it, and the next run sweeps
// the staging folder it left.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execa } from 'execa';
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { exists } from '../../core/fs.js';
import { cli, cliStart, sleep, tmpProject, waitFor } from '../helpers.js';

/** A number no other process on the machine has on its command line. */
const uniqueTag = () => `${400 + Math.floor(Math.random() * 500)}.${Math.floor(Math.random() * 1e6)}`;
/** Whether a process whose whole command line matches `pattern` (a regex) is alive. */
const running = async (pattern: string) =>
  String((await execa('pgrep', ['-f', pattern], { reject: false })).stdout).trim() !== '';

async function killedCli(child: ReturnType<typeof cliStart>): Promise<void> {
  process.kill(child.pid!, 'SIGKILL');
  await child;
}

test('kill -9 during a shell stage: its command and background children die, the next run sweeps the staging folder', async () => {
  const tag = uniqueTag();
  const exp = `name: orphans
stages:
  a:
    uses: shell
    with:
      run: |
        if [ ! -e once ]; then
          touch once
          (while true; do echo beat >> beat.txt; sleep 0.2; done) &
          touch started
          sleep ${tag}
        fi
        echo ok > out.txt
      outs: [out.txt]
`;
  const dir = await tmpProject({ 'e.yaml': exp });
  const first = cliStart(['run', 'e.yaml'], { cwd: dir });
  await waitFor(() => exists(join(dir, 'started')), 60_000, 'the stage to start');
  const tmp = join(dir, '.mlepipe', 'tmp');
  const staged = (await readdir(tmp)).filter((n) => n.includes(`.${first.pid}.`));
  assert.is(staged.length, 1, 'the staging folder carries the pid of its run');
  await killedCli(first);

  // Gone once the sleep has no process and beat.txt has stopped growing for a second.
  const size = async () => (await stat(join(dir, 'beat.txt')).catch(() => null))?.size ?? 0;
  await waitFor(
    async () => {
      if (await running(`^sleep ${tag}$`)) return false;
      const before = await size();
      await sleep(1000);
      return (await size()) === before;
    },
    60_000,
    'the stage and its background loop to die',
  );
  assert.ok(await exists(join(tmp, staged[0])), 'the staging folder is left until the next run');

  const rerun = await cli(['run', 'e.yaml'], { cwd: dir });
  assert.is(rerun.exitCode, 0, rerun.stderr);
  assert.equal(await readdir(tmp), []);
  assert.is((await cli(['status', 'e.yaml'], { cwd: dir })).exitCode, 0);
});

const TASK = {
  'task/public/train.csv': 'id,y\n1,0\n',
  'task/private/answer.csv': 'id,y\n1,0\n',
  'task/private/evaluator.py': 'print("{}")\n',
  // The step and a forked child both sleep forever with the tag on their command line.
  'loop.py': 'import os, sys, time\nos.fork()\nwhile True:\n    time.sleep(0.2)\n',
};

for (const backend of ['process', 'bwrap', 'docker']) {
  test(`kill -9 during a ${backend} step: the step and its children die${backend === 'docker' ? ', and its container goes' : ''}`, async () => {
    const tag = uniqueTag();
    const dir = await tmpProject(TASK);
    const run = cliStart(
      ['sandbox', 'run', '--task', 'task', '--backend', backend, '--timeout', '600', 'loop.py', tag],
      { cwd: dir },
    );
    // The step itself, not the CLI (whose command line has the tag too).
    const step = `^[^ ]*python[0-9.]* loop\\.py ${tag}$`;
    await waitFor(() => running(step), 60_000, `the ${backend} step to start`);
    await killedCli(run);
    await waitFor(async () => !(await running(step)), 60_000, `the ${backend} step to die`);
    if (backend === 'docker') {
      const containers = async () =>
        String(
          (await execa('docker', ['ps', '-a', '--no-trunc', '--format', '{{.Command}}'], { reject: false })).stdout,
        );
      await waitFor(async () => !(await containers()).includes(tag), 60_000, 'the container to be removed');
    }
  });
}

test.run();
