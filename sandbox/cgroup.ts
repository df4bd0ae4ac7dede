// Per-jail control groups: a process cap (pids) and a memory cap that count
// every process of the step, and a way to kill all of them, including
// daemons that left the process group. cgroup v1 (a hierarchy per
// controller) and v2 (one unified hierarchy) are both handled; where neither
// can be written, steps fall back to per-process rlimits.
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, readFile, rmdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { reapCgroup } from '../core/reaper.js';

const ROOT = '/sys/fs/cgroup';

export interface CgroupLimits {
  maxProcs: number;
  memoryBytes: number;
}

export interface Cgroup {
  /** Folders whose cgroup.procs a process joins. */
  readonly dirs: readonly string[];
  /** Shell prefix that moves the shell into the cgroup and then execs the command. */
  wrap(argv: string[]): string[];
  /** SIGKILLs every process still inside, until it is empty. */
  killAll(): Promise<void>;
  /** How many processes the kernel's OOM killer has killed inside so far (the memory cap was hit). */
  oomKills(): Promise<number>;
  remove(): Promise<void>;
}

/** Current cgroup paths of this process, by controller ('' key for v2). */
function ownPaths(): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of readFileSync('/proc/self/cgroup', 'utf8').trim().split('\n')) {
    const [, controllers, path] = line.split(':');
    for (const c of controllers.split(',')) out.set(c, path);
  }
  return out;
}

let probed: 'v1' | 'v2' | 'none' | undefined;

async function writable(dir: string): Promise<boolean> {
  const test = join(dir, `mlepipe-probe-${process.pid}-${randomBytes(3).toString('hex')}`);
  try {
    await mkdir(test);
    await rmdir(test);
    return true;
  } catch {
    return false;
  }
}

/** Which cgroup flavour this machine lets us use. */
export async function cgroupSupport(): Promise<'v1' | 'v2' | 'none'> {
  if (probed) return probed;
  probed = 'none';
  try {
    const own = ownPaths();
    if (existsSync(join(ROOT, 'pids')) && existsSync(join(ROOT, 'memory'))) {
      if (
        (await writable(join(ROOT, 'pids', own.get('pids') ?? '/'))) &&
        (await writable(join(ROOT, 'memory', own.get('memory') ?? '/')))
      )
        probed = 'v1';
    } else if (existsSync(join(ROOT, 'cgroup.controllers'))) {
      const base = join(ROOT, own.get('') ?? '/');
      const controllers = await readFile(join(base, 'cgroup.subtree_control'), 'utf8').catch(() => '');
      if (controllers.includes('pids') && controllers.includes('memory') && (await writable(base))) probed = 'v2';
    }
  } catch {
    probed = 'none';
  }
  return probed;
}

export async function createCgroup(limits: CgroupLimits): Promise<Cgroup | null> {
  const kind = await cgroupSupport();
  if (kind === 'none') return null;
  const name = `mlepipe-${process.pid}-${randomBytes(4).toString('hex')}`;
  const own = ownPaths();
  const dirs: string[] = [];
  try {
    if (kind === 'v1') {
      const pids = join(ROOT, 'pids', own.get('pids') ?? '/', name);
      const mem = join(ROOT, 'memory', own.get('memory') ?? '/', name);
      await mkdir(pids);
      dirs.push(pids);
      await mkdir(mem);
      dirs.push(mem);
      await writeFile(join(pids, 'pids.max'), String(limits.maxProcs));
      await writeFile(join(mem, 'memory.limit_in_bytes'), String(limits.memoryBytes));
      // Without this, a capped step could spill into swap instead of failing.
      await writeFile(join(mem, 'memory.memsw.limit_in_bytes'), String(limits.memoryBytes)).catch(() => {});
    } else {
      const dir = join(ROOT, own.get('') ?? '/', name);
      await mkdir(dir);
      dirs.push(dir);
      await writeFile(join(dir, 'pids.max'), String(limits.maxProcs));
      await writeFile(join(dir, 'memory.max'), String(limits.memoryBytes));
      await writeFile(join(dir, 'memory.swap.max'), '0').catch(() => {});
    }
  } catch {
    for (const d of dirs.reverse()) await rmdir(d).catch(() => {});
    return null;
  }
  return makeCgroup(dirs, kind);
}

function makeCgroup(dirs: string[], kind: 'v1' | 'v2'): Cgroup {
  const unreap = dirs.map((d) => reapCgroup(d));
  const procs = async (): Promise<number[]> => {
    const all = new Set<number>();
    for (const d of dirs) {
      const text = await readFile(join(d, 'cgroup.procs'), 'utf8').catch(() => '');
      for (const p of text.split('\n').filter(Boolean)) all.add(Number(p));
    }
    return [...all];
  };
  return {
    dirs,
    wrap(argv) {
      const joins = dirs.map((d) => `echo $$ > '${d}/cgroup.procs'`).join(' && ');
      return ['/bin/sh', '-c', `${joins} && exec "$@"`, 'mlepipe-cgroup', ...argv];
    },
    async killAll() {
      for (let round = 0; round < 50; round++) {
        if (kind === 'v2' && existsSync(join(dirs[0], 'cgroup.kill')))
          await writeFile(join(dirs[0], 'cgroup.kill'), '1').catch(() => {});
        const left = await procs();
        if (!left.length) return;
        for (const p of left) {
          try {
            process.kill(p, 'SIGKILL');
          } catch {
            // already gone
          }
        }
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    async oomKills() {
      // Kills, not limit hits: memory.failcnt also counts page cache reclaimed at the cap, which harms nobody.
      const file = kind === 'v1' ? join(dirs[1], 'memory.oom_control') : join(dirs[0], 'memory.events');
      const text = await readFile(file, 'utf8').catch(() => '');
      return Number(/^oom_kill (\d+)$/m.exec(text)?.[1] ?? 0);
    },
    async remove() {
      await this.killAll();
      for (const d of [...dirs].reverse()) {
        for (let i = 0; i < 20; i++) {
          try {
            await rmdir(d);
            break;
          } catch {
            await new Promise((r) => setTimeout(r, 25));
          }
        }
      }
      unreap.forEach((u) => u());
    },
  };
}

/**
 * The OOM-kill counter of the memory cgroup that process `pid` is in (a
 * container's, read through its main process), or null where that file cannot
 * be read. A counter, unlike the engine's OOM events, can be read before a
 * step starts: kills that happened earlier are never taken for this step's.
 */
export async function oomCounterOf(pid: number): Promise<Pick<Cgroup, 'oomKills'> | null> {
  const own = await readFile(`/proc/${pid}/cgroup`, 'utf8').catch(() => '');
  const paths = new Map<string, string>();
  for (const line of own.trim().split('\n')) {
    const [, controllers = '', path = ''] = line.split(':');
    for (const c of controllers.split(',')) paths.set(c, path);
  }
  const v1 = paths.get('memory');
  const file =
    v1 !== undefined
      ? join(ROOT, 'memory', v1, 'memory.oom_control')
      : paths.has('')
        ? join(ROOT, paths.get('')!, 'memory.events')
        : '';
  const read = async (): Promise<number | null> => {
    const text = file ? await readFile(file, 'utf8').catch(() => '') : '';
    const m = /^oom_kill (\d+)$/m.exec(text);
    return m ? Number(m[1]) : null;
  };
  if ((await read()) === null) return null;
  return { oomKills: async () => (await read()) ?? 0 };
}

/**
 * Calls `onOom` once when the OOM killer has struck inside `cg` more than `before` times (polled: cgroup
 * files offer no change notification a Node process can wait on). Returns the function that stops watching.
 */
export function watchOom(cg: Pick<Cgroup, 'oomKills'>, onOom: () => void, before = 0, everyMs = 100): () => void {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const poll = async () => {
    const kills = await cg.oomKills();
    if (stopped) return;
    if (kills > before) {
      stopped = true;
      onOom();
      return;
    }
    timer = setTimeout(() => void poll(), everyMs);
  };
  void poll();
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}
