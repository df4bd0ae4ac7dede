// A warm jail as its executor sees it: the folders it is built over, the
// server's standard streams, and how to end it. Jails in bwrap are started
// here; jails in containers in backends/docker.ts.
import { mkdir, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { gated, reapGroup } from '../../core/reaper.js';
import { BWRAP_SPAWN, bwrapCommand } from '../backends/bwrap.js';
import { createCgroup, watchOom } from '../cgroup.js';
import type { JailPython } from '../interpreter.js';
import { MB } from '../limits.js';
import { spawnCommand } from '../spawn.js';
import type { Limits } from '../types.js';

/** The server itself (interpreter plus preloaded modules) on top of a step's memory cap. */
export const SERVER_MB = 1024;

/** A started jail: the server's standard streams, and how to end it. */
export interface JailHandle {
  stdin: Writable;
  stdout: Readable;
  stderr: Readable;
  /** Settles when the jail's main process ends. */
  exited: Promise<void>;
  /** True when something outside the jail caps its processes (a cgroup, Docker's pids limit). */
  countsProcesses: boolean;
  /** Calls `onOom` once if the OOM killer strikes in the jail from now on; resolves to the function that stops watching. */
  watchOom(onOom: () => void): Promise<() => void>;
  stop(): Promise<void>;
  /** Set for a jail on another machine's engine, whose workspace is a copy of the slot's (sandbox/mirror.ts). */
  far?: FarJail;
}

/** Deletes workspace files in the jail, through its server. */
export type Remover = (paths: string[]) => Promise<void>;

/** What a jail on another engine needs around the steps: its task's files shown, its workspace kept in step. */
export interface FarJail {
  /** Shows the task's public files (`pub`, this machine's folder) as the jail's public/. */
  assign(pub: string, remove: Remover): Promise<void>;
  /** Before a step: the workspace changes made here go there. */
  push(remove: Remover): Promise<void>;
  /** After a step: the jail's workspace comes back here. */
  pull(): Promise<void>;
  /** After a reset: the copy here is emptied too. */
  clear(): Promise<void>;
  /** After a step that got no answer: throws the host's fault when its engine no longer answers either. */
  check(): Promise<void>;
}

/** Something that starts a jail running `argv` over a slot (bwrap here; docker in backends/docker.ts). */
export interface JailLauncher {
  readonly kind: 'warm-bwrap' | 'warm-docker';
  /** More settings for the server (sandbox/py/warm.py's CFG), such as `own_oom` where it reads its cgroup's OOM count. */
  readonly serverConfig?: Readonly<Record<string, unknown>>;
  start(slot: Slot, limits: Limits, argv: string[]): Promise<JailHandle>;
}

/** Host folders a warm jail sees: ws/ as /workspace, pub/ as /workspace/public (read-only). */
export interface Slot {
  root: string;
  ws: string;
  pub: string;
}

export async function newSlot(): Promise<Slot> {
  const root = await mkdtemp(join(tmpdir(), 'mlepipe-warm-'));
  const ws = join(root, 'ws');
  const pub = join(root, 'pub');
  await mkdir(join(ws, 'public'), { recursive: true });
  await mkdir(pub);
  return { root, ws, pub };
}

const noWatch = async () => () => {};

/** Warm jails in bwrap running `python` (its path inside the jail is what the executor starts). */
export const bwrapJails = (python?: JailPython): JailLauncher => ({
  kind: 'warm-bwrap',
  async start(slot, limits, argv) {
    const cgroup = await createCgroup({
      maxProcs: limits.maxProcs + 16,
      memoryBytes: (limits.memoryMb + SERVER_MB) * MB,
    });
    const cmd = bwrapCommand(slot.ws, slot.pub, limits, argv, python);
    // Behind the watchdog's gate (core/reaper.ts): the jail starts once its group is announced.
    const proc = spawnCommand(
      { ...cmd, argv: gated(cgroup ? cgroup.wrap(cmd.argv) : cmd.argv) },
      { ...BWRAP_SPAWN, stdin: 'pipe' },
    );
    const exited = new Promise<void>((r) => proc.once('exit', () => r()));
    // The server reads its requests after the gate's line.
    const unreap = await reapGroup(proc, { keepStdin: true });
    return {
      stdin: proc.stdin!,
      stdout: proc.stdout!,
      stderr: proc.stderr!,
      exited,
      countsProcesses: !!cgroup,
      watchOom: cgroup ? async (onOom) => watchOom(cgroup, onOom, await cgroup.oomKills()) : noWatch,
      async stop() {
        try {
          if (proc.pid) process.kill(-proc.pid, 'SIGKILL');
        } catch {
          // gone
        }
        unreap();
        await cgroup?.remove();
      },
    };
  },
});
