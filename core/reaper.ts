// Children die with mlepipe, even with kill -9. The first time something
// long-lived is started, mlepipe starts a watchdog: a small Node process in a
// session of its own, whose stdin is a pipe from mlepipe. Each process group,
// control group and container is announced on that pipe when it starts and
// withdrawn once mlepipe has ended it. When the pipe closes (mlepipe exited,
// however it exited), the watchdog kills whatever is still announced and exits:
// after a clean exit that is nothing.
import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';

// CommonJS for `node -e`; kept free of mlepipe imports so that it runs from the sources and from dist alike.
const WATCHDOG = String.raw`
process.title = 'mlepipe-watchdog';
const fs = require('node:fs');
const held = { g: new Set(), p: new Set(), d: new Set(), c: new Set() };
let pending = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => {
  pending += chunk;
  for (let i; (i = pending.indexOf('\n')) >= 0; pending = pending.slice(i + 1)) {
    const line = pending.slice(0, i);
    const set = held[line[1]];
    if (set && line[0] === '+') set.add(line.slice(3));
    else if (set && line[0] === '-') set.delete(line.slice(3));
  }
});
const kill = (pid) => { try { process.kill(pid, 'SIGKILL'); } catch {} };
let reaping = false;
async function reap() {
  if (reaping) return;
  reaping = true;
  for (const g of held.g) kill(-Number(g));
  for (const p of held.p) kill(Number(p));
  // Control groups also hold what left its process group (setsid daemons).
  for (const dir of held.d) {
    for (let round = 0; round < 50; round++) {
      let pids = [];
      try { pids = fs.readFileSync(dir + '/cgroup.procs', 'utf8').split('\n').filter(Boolean); } catch {}
      if (!pids.length) break;
      pids.forEach((p) => kill(Number(p)));
      await new Promise((r) => setTimeout(r, 20));
    }
    try { fs.rmdirSync(dir); } catch {}
  }
  if (held.c.size && process.argv[1]) {
    try {
      const Docker = require(process.argv[1]);
      const docker = new Docker();
      await Promise.all([...held.c].map((id) => docker.getContainer(id).remove({ force: true, v: true }).catch(() => {})));
    } catch {}
  }
  process.exit(0);
}
process.stdin.on('end', reap);
process.stdin.on('close', reap);
process.stdin.on('error', reap);
`;

let watchdog: ChildProcess | null | undefined;

function start(): ChildProcess | null {
  let dockerode = '';
  try {
    dockerode = createRequire(import.meta.url).resolve('dockerode');
  } catch {
    // without dockerode there are no containers to remove
  }
  try {
    const child = spawn(process.execPath, ['-e', WATCHDOG, dockerode], { detached: true, stdio: ['pipe', 'ignore', 'ignore'] });
    child.on('error', () => (watchdog = null));
    child.stdin!.on('error', () => (watchdog = null));
    // Neither keeps mlepipe running: the pipe closes when mlepipe exits, which is the point.
    child.unref();
    (child.stdin as unknown as { unref(): void }).unref();
    return child;
  } catch {
    return null;
  }
}

/** One line to the watchdog; written at once (libuv tries the write immediately), so an exit right after loses nothing. */
type Kind = 'g' | 'p' | 'd' | 'c';

function tell(op: '+' | '-', kind: Kind, what: string): void {
  if (watchdog === undefined) watchdog = start();
  if (watchdog?.stdin?.writable) watchdog.stdin.write(`${op}${kind} ${what}\n`);
}

function hold(kind: Kind, what: string): () => void {
  tell('+', kind, what);
  let released = false;
  return () => {
    if (released) return;
    released = true;
    tell('-', kind, what);
  };
}

/**
 * The process group led by `pgid` (a child spawned with `detached: true`) is
 * SIGKILLed if mlepipe dies before calling the returned function, which is
 * called once the group has been ended.
 */
export function reapGroup(pgid: number | undefined): () => void {
  return pgid ? hold('g', String(pgid)) : () => {};
}

/** A child that is not a group leader (a short trusted helper such as an evaluator): held until it settles. */
export async function reapedUntilDone<P extends Promise<unknown> & { pid?: number }>(child: P): Promise<Awaited<P>> {
  const release = child.pid ? hold('p', String(child.pid)) : () => {};
  try {
    return await child;
  } finally {
    release();
  }
}

/** A control group folder: its processes killed and the folder removed if mlepipe dies first. */
export function reapCgroup(dir: string): () => void {
  return hold('d', dir);
}

/** A container (of the engine DOCKER_HOST names, else the local one): removed by force if mlepipe dies first. */
export function reapContainer(id: string): () => void {
  return hold('c', id);
}
