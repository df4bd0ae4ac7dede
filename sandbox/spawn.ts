// Runs one jailed command to completion under the step's limits: output
// capped, wall clock enforced, the memory cap ending the step, an interrupt
// stopping it, and afterwards nothing of it left running.
import { spawn } from 'node:child_process';
import { createCgroup, watchOom } from './cgroup.js';
import { finishStep, MB, stopper, workspaceCheck } from './limits.js';
import { CappedOutput } from './output.js';
import { assetText } from '../core/assets.js';
import { onceAborted, waitAtMost } from '../core/proc.js';
import { gated, reapGroup } from '../core/reaper.js';
import type { Limits, Step, StepResult } from './types.js';

/** Room for the interpreter and numpy/pandas/sklearn themselves (about 380 MB of address space). */
export const BASELINE_MB = 512;

export interface SpawnArgs {
  env: Record<string, string>;
  cwd?: string;
  limits: Limits;
  backend: StepResult['backend'];
  /** Host path of the workspace, measured afterwards against maxWorkspaceMb. */
  workspace: string;
  /** Aborting it kills the step at once. */
  signal?: AbortSignal;
}

/** A command line, and bytes for its fd 3 (bwrap reads its arguments there, so they never show in /proc). */
export interface Command {
  argv: string[];
  fd3?: Buffer;
}

/** rlimits for the in-jail launcher; NPROC only where no cgroup counts processes. */
export function launcherRlimits(limits: Limits, cgroup: boolean): Record<string, number | null> {
  const nonRoot = typeof process.getuid === 'function' && process.getuid() !== 0;
  return {
    as: (limits.memoryMb + BASELINE_MB) * MB,
    fsize: limits.maxWorkspaceMb * MB,
    nofile: 1024,
    core: 0,
    nproc: !cgroup && nonRoot ? limits.maxProcs : null,
  };
}

/**
 * `python -c LAUNCHER CONFIG`: sets the limits inside the jail, then execs the step's file. `killAll`
 * (only where the jail has a PID namespace of its own) keeps the launcher as the step's parent, killing
 * everything in the jail once the step's timeout has passed since the launcher started.
 */
export function launcherArgv(
  python: string,
  limits: Limits,
  cgroup: boolean,
  cwd: string,
  step: Step,
  killAll = false,
): string[] {
  const cfg = {
    rlimits: launcherRlimits(limits, cgroup),
    cwd,
    argv: [python, step.file, ...(step.args ?? [])],
    ...(killAll ? { kill_all_after_s: limits.timeoutMs / 1000 } : {}),
  };
  return [python, '-c', assetText('sandbox/py/launch.py'), JSON.stringify(cfg)];
}

/** Spawns `cmd` in a process group of its own, handing it its fd 3 bytes if it has any. */
export function spawnCommand(
  cmd: Command,
  opts: { env: Record<string, string>; cwd?: string; stdin: 'pipe' | 'ignore' },
) {
  const child = spawn(cmd.argv[0], cmd.argv.slice(1), {
    cwd: opts.cwd,
    env: opts.env,
    detached: true,
    stdio: [opts.stdin, 'pipe', 'pipe', ...(cmd.fd3 ? (['pipe'] as const) : [])],
  });
  const fd3 = child.stdio[3] as NodeJS.WritableStream | null | undefined;
  if (cmd.fd3 && fd3) {
    // A child that dies before reading its arguments closes the pipe; its exit reports that.
    (fd3 as unknown as NodeJS.EventEmitter).on('error', () => {});
    fd3.end(cmd.fd3);
    // Only written to: once the child is gone its read side would stay open and keep the host process alive.
    child.once('exit', () => (fd3 as unknown as { destroy(): void }).destroy());
  }
  return child;
}

export async function spawnJailed(a: SpawnArgs, command: (cgroup: boolean) => Command): Promise<StepResult> {
  const cg = await createCgroup({
    maxProcs: a.limits.maxProcs + 8,
    memoryBytes: (a.limits.memoryMb + BASELINE_MB) * MB,
  });
  const cmd = command(!!cg);
  const t0 = performance.now();
  // The command waits behind a gate until its group is announced to the watchdog (core/reaper.ts).
  const argv = gated(cg ? cg.wrap(cmd.argv) : cmd.argv);
  const child = spawnCommand({ ...cmd, argv }, { env: a.env, cwd: a.cwd, stdin: 'pipe' });
  // Listened to before anything is awaited, so that neither is missed.
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('error', () => resolve({ code: 127, signal: null }));
    child.once('exit', (code, signal) => resolve({ code, signal }));
  });
  const out = new CappedOutput(a.limits.maxOutputBytes);
  const err = new CappedOutput(a.limits.maxOutputBytes);
  child.stdout!.on('data', (c: Buffer) => out.push(c));
  child.stderr!.on('data', (c: Buffer) => err.push(c));
  const streamsClosed = Promise.all([
    new Promise((r) => child.stdout!.once('close', r)),
    new Promise((r) => child.stderr!.once('close', r)),
  ]);
  const unreap = await reapGroup(child);

  const killGroup = () => {
    try {
      if (child.pid) process.kill(-child.pid, 'SIGKILL');
    } catch {
      // gone
    }
  };
  const { end, stop } = stopper(() => {
    killGroup();
    void cg?.killAll();
  });
  const timer = setTimeout(() => stop('timedOut'), a.limits.timeoutMs);
  // A process killed for the memory cap ends the whole step: the rest would only wait for it, or limp on.
  const unwatch = cg ? watchOom(cg, () => stop('oomKilled')) : () => {};
  const unabort = a.signal ? onceAborted(a.signal, () => stop('interrupted')) : () => {};

  const exit = await exited;
  clearTimeout(timer);
  unwatch();
  unabort();
  // Whatever the step left behind (daemons, detached grandchildren) goes now.
  killGroup();
  unreap();
  await cg?.killAll();
  // Drained once every writer is dead; a bounded wait covers writers we could not see.
  await waitAtMost(streamsClosed, 1000);
  child.stdout!.destroy();
  child.stderr!.destroy();
  const durationMs = Math.round(performance.now() - t0);
  // A kill the poll had not seen yet still counts.
  if (!end.oomKilled && cg && (await cg.oomKills()) > 0) end.oomKilled = true;
  await cg?.remove();

  const exitCode = exit.code ?? 128 + signalNumber(exit.signal);
  const raw = {
    exitCode,
    stdout: out.text(),
    stderr: err.text(),
    truncated: out.truncated || err.truncated,
    durationMs,
    backend: a.backend,
  };
  return { ...finishStep(raw, a.limits, end), ...(await workspaceCheck(a.workspace, a.limits)) };
}

function signalNumber(sig: NodeJS.Signals | null): number {
  const table: Record<string, number> = {
    SIGKILL: 9,
    SIGTERM: 15,
    SIGSEGV: 11,
    SIGABRT: 6,
    SIGXFSZ: 25,
    SIGXCPU: 24,
    SIGBUS: 7,
    SIGINT: 2,
  };
  return sig ? (table[sig] ?? 1) : 0;
}
