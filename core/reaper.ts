// Children die with mlepipe, even with kill -9. The first time something
// long-lived is started, mlepipe starts a watchdog: a small Node process in a
// session of its own, whose stdin is a pipe from mlepipe. Each process group,
// control group and container is announced on that pipe before it can run
// and withdrawn once mlepipe has ended it. When the pipe closes (mlepipe
// exited, however it exited), the watchdog kills whatever is still announced
// and exits: after a clean exit that is nothing.
//
// A process group's id is its leader's pid, known only once it has been
// spawned, and on a loaded machine the leader can run for a long while before
// mlepipe gets to announce it. So a group's command starts behind a gate that
// mlepipe opens only after the announcement is in the watchdog's pipe: a kill
// -9 before that leaves a gate that reads end of file and exits, never a
// command that nobody will kill.
import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import type { Writable } from 'node:stream';

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
/** What is announced now (`g 123`, ...): given again to a watchdog started after another one died. */
const announced = new Set<string>();
/** A watchdog that cannot be started, or dies, is replaced on the next announcement, a few times at most. */
let startsLeft = 3;

function start(): ChildProcess | null {
  let dockerode = '';
  try {
    dockerode = createRequire(import.meta.url).resolve('dockerode');
  } catch {
    // without dockerode there are no containers to remove
  }
  try {
    const child = spawn(process.execPath, ['-e', WATCHDOG, dockerode], {
      detached: true,
      stdio: ['pipe', 'ignore', 'ignore'],
    });
    const gone = () => {
      if (watchdog === child) watchdog = undefined;
    };
    child.on('error', gone);
    child.on('exit', gone);
    child.stdin!.on('error', gone);
    // Neither keeps mlepipe running: the pipe closes when mlepipe exits, which is the point.
    child.unref();
    (child.stdin as unknown as { unref(): void }).unref();
    return child;
  } catch {
    return null;
  }
}

type Kind = 'g' | 'p' | 'd' | 'c';

/** One line to the watchdog; settles once it is in the pipe (or there is no watchdog to tell). */
function tell(op: '+' | '-', kind: Kind, what: string): Promise<void> {
  if (op === '+') announced.add(`${kind} ${what}`);
  else announced.delete(`${kind} ${what}`);
  return send(`${op}${kind} ${what}\n`);
}

function send(text: string, retry = true): Promise<void> {
  if (watchdog === undefined) {
    watchdog = startsLeft-- > 0 ? start() : null;
    // A new watchdog learns everything announced so far, this change included.
    text = [...announced].map((a) => `+${a}\n`).join('');
  }
  const stdin = watchdog?.stdin;
  if (!text || !stdin?.writable) return Promise.resolve();
  // libuv tries the write at once, so the line is in the pipe even if mlepipe exits right after.
  return new Promise((resolve) =>
    stdin.write(text, (err) => {
      if (!err || !retry) return resolve();
      // The watchdog died (killed from outside): a new one, told everything.
      if (watchdog?.stdin === stdin) watchdog = undefined;
      resolve(send('', false));
    }),
  );
}

function hold(kind: Kind, what: string): { release: () => void; told: Promise<void> } {
  const told = tell('+', kind, what);
  let released = false;
  const release = () => {
    if (released) return;
    released = true;
    void tell('-', kind, what);
  };
  return { release, told };
}

/**
 * `argv` behind the gate: a shell that waits for one line on its stdin, then
 * becomes `argv` (same pid, so it stays the leader of its process group). For
 * children spawned with `detached: true` and a piped stdin, then given to reapGroup.
 */
export function gated(argv: readonly string[]): string[] {
  return ['/bin/sh', '-c', 'read -r go || exit 126; exec "$@"', 'mlepipe-gate', ...argv];
}

/**
 * Announces the process group led by `child` (spawned from `gated(argv)`),
 * then opens its gate. The group is SIGKILLed if mlepipe dies before calling
 * the function this resolves to, which is called once the group has been
 * ended. The child's stdin is closed after the gate line unless `keepStdin`
 * (the command then reads what follows it).
 */
export async function reapGroup(
  child: { pid?: number; stdin: Writable | null },
  opts: { keepStdin?: boolean } = {},
): Promise<() => void> {
  if (!child.pid) return () => {};
  const { release, told } = hold('g', String(child.pid));
  await told;
  const stdin = child.stdin;
  if (stdin && !opts.keepStdin) {
    // A child that is already gone (killed meanwhile) cannot take the line.
    stdin.on('error', () => {});
    stdin.end('\n');
  } else stdin?.write('\n');
  return release;
}

/** A child that is not a group leader (a short trusted helper such as an evaluator): held until it settles. */
export async function reapedUntilDone<P extends Promise<unknown> & { pid?: number }>(child: P): Promise<Awaited<P>> {
  const release = child.pid ? hold('p', String(child.pid)).release : () => {};
  try {
    return await child;
  } finally {
    release();
  }
}

/** A control group folder (announced before anything runs in it): its processes killed and the folder removed if mlepipe dies first. */
export function reapCgroup(dir: string): () => void {
  return hold('d', dir).release;
}

/** A container (announced before it is started; of the engine DOCKER_HOST names, else the local one): removed by force if mlepipe dies first. */
export function reapContainer(id: string): () => void {
  return hold('c', id).release;
}
