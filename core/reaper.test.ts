import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execa } from 'execa';
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { join } from 'node:path';
import { ROOT, waitFor } from '../test/helpers.js';

/** Running (a zombie waiting for a parent that never reaps it counts as dead). */
const alive = (pid: number) => {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
};

test('groups still held when their owner is killed die; released ones are left alone', async () => {
  // A stand-in for the CLI: two process groups with a background grandchild each, one released.
  const owner = execa(
    process.execPath,
    [
      '--import',
      'tsx',
      '--input-type=module',
      '-e',
      `import { spawn } from 'node:child_process';
       import { reapGroup } from ${JSON.stringify(pathToFileURL(join(ROOT, 'core', 'reaper.ts')).href)};
       const start = () => spawn('sh', ['-c', 'sleep 600 & echo $!; wait'], { detached: true, stdio: ['ignore', 'pipe', 'ignore'] });
       const held = start(), freed = start();
       reapGroup(held.pid);
       reapGroup(freed.pid)();
       const grandchild = (c) => new Promise((r) => c.stdout.once('data', (d) => r(Number(String(d).trim()))));
       console.log(JSON.stringify({ held: [held.pid, await grandchild(held)], freed: [freed.pid, await grandchild(freed)] }));
       setInterval(() => {}, 1000);`,
    ],
    { cwd: ROOT, reject: false, buffer: false, stdout: 'pipe' },
  );
  const pids = await new Promise<{ held: number[]; freed: number[] }>((r) => owner.stdout!.once('data', (d) => r(JSON.parse(String(d)))));
  try {
    assert.ok([...pids.held, ...pids.freed].every(alive));
    owner.kill('SIGKILL');
    await owner;
    await waitFor(() => !pids.held.some(alive), 30_000, 'the held group to die');
    assert.ok(pids.freed.every(alive), 'a released group outlives its owner');
  } finally {
    for (const pid of [...pids.held, ...pids.freed]) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone
      }
    }
  }
});

test.run();
