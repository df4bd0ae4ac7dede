import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execa, type ResultPromise } from 'execa';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
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

const killAll = (pids: number[]) => {
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
};

/**
 * A stand-in for the CLI, running `body` (an ES module body) with `start()`
 * (a gated process group whose shell touches `ran` in `dir`, a fresh folder,
 * and prints the pid of a background grandchild) and `grandchild(child)` at
 * hand. It prints JSON lines for the test to read.
 */
async function owner(
  body: string,
): Promise<{ proc: ResultPromise; next: () => Promise<Record<string, number[]>>; dir: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'mlepipe-reaper-'));
  const proc = execa(
    process.execPath,
    [
      '--import',
      'tsx',
      '--input-type=module',
      '-e',
      `import { spawn } from 'node:child_process';
       import { gated, reapGroup } from ${JSON.stringify(pathToFileURL(join(ROOT, 'core', 'reaper.ts')).href)};
       const start = () => { const [f, ...a] = gated(['sh', '-c', 'touch ran; sleep 600 & echo $!; wait']); return spawn(f, a, { cwd: ${JSON.stringify(dir)}, detached: true, stdio: ['pipe', 'pipe', 'ignore'] }); };
       const grandchild = (c) => new Promise((r) => c.stdout.once('data', (d) => r(Number(String(d).trim()))));
       ${body}`,
    ],
    { cwd: ROOT, reject: false, buffer: false, stdin: 'pipe', stdout: 'pipe' },
  );
  let pending = '';
  const waiting: ((v: Record<string, number[]>) => void)[] = [];
  proc.stdout!.on('data', (d) => {
    pending += String(d);
    for (let i; (i = pending.indexOf('\n')) >= 0; pending = pending.slice(i + 1))
      waiting.shift()?.(JSON.parse(pending.slice(0, i)));
  });
  return { proc, next: () => new Promise((r) => waiting.push(r)), dir };
}

test('groups still held when their owner is killed die; released ones are left alone', async () => {
  const { proc, next } = await owner(`
    const held = start(), freed = start();
    await reapGroup(held);
    (await reapGroup(freed))();
    console.log(JSON.stringify({ held: [held.pid, await grandchild(held)], freed: [freed.pid, await grandchild(freed)] }));
    setInterval(() => {}, 1000);`);
  const pids = await next();
  try {
    assert.ok([...pids.held, ...pids.freed].every(alive));
    proc.kill('SIGKILL');
    await proc;
    await waitFor(() => !pids.held.some(alive), 30_000, 'the held group to die');
    assert.ok(pids.freed.every(alive), 'a released group outlives its owner');
  } finally {
    killAll([...pids.held, ...pids.freed]);
  }
});

test('a group does not start before it is held: an owner killed in between leaves nothing running', async () => {
  // The owner is held up between spawning the group and announcing it (as a loaded machine does), and
  // is killed there. Ungated, the command would have run meanwhile, with nobody left to kill it.
  const { proc, next, dir } = await owner(
    `const child = start();
     console.log(JSON.stringify({ gate: [child.pid] }));
     Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1000);
     process.kill(process.pid, 'SIGKILL');`,
  );
  const { gate } = await next();
  try {
    await proc;
    await waitFor(
      () => {
        assert.not.ok(existsSync(join(dir, 'ran')), 'the command never ran');
        return !alive(gate[0]);
      },
      30_000,
      'the gate to see its owner gone',
    );
    assert.not.ok(existsSync(join(dir, 'ran')), 'the command never ran');
  } finally {
    // The whole group, in case the command did run.
    killAll([-gate[0]]);
  }
});

test('a watchdog killed while its owner lives is replaced, and told what is still held', async () => {
  const { proc, next } = await owner(`
    const first = start();
    await reapGroup(first);
    console.log(JSON.stringify({ first: [first.pid, await grandchild(first)] }));
    process.stdin.once('data', async () => {
      const second = start();
      await reapGroup(second);
      console.log(JSON.stringify({ second: [second.pid, await grandchild(second)] }));
    });`);
  const { first } = await next();
  let second: number[] = [];
  try {
    const watchdogs = String(
      (await execa('pgrep', ['-P', String(proc.pid), '-f', 'mlepipe-watchdog'], { reject: false })).stdout,
    ).trim();
    assert.ok(watchdogs, 'the owner has a watchdog');
    killAll(watchdogs.split('\n').map(Number));
    await waitFor(() => watchdogs.split('\n').every((p) => !alive(Number(p))), 30_000, 'the watchdog to die');
    proc.stdin!.write('go\n');
    ({ second } = await next());
    proc.kill('SIGKILL');
    await proc;
    await waitFor(() => ![...first, ...second].some(alive), 30_000, 'both groups to die');
  } finally {
    killAll([...first, ...second]);
  }
});

test.run();
