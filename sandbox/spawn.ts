// Runs one jailed command to completion under the step's limits: output
// capped, wall clock enforced, and afterwards nothing of it left running.
import { spawn } from 'node:child_process';
import { createCgroup } from './cgroup.js';
import { limitNotes, MB, workspaceCheck } from './limits.js';
import { CappedOutput } from './output.js';
import { assetText } from '../core/assets.js';
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

/** `python -c LAUNCHER CONFIG`: sets the limits inside the jail, then execs the step's file. */
export function launcherArgv(python: string, limits: Limits, cgroup: boolean, cwd: string, step: Step): string[] {
  const cfg = { rlimits: launcherRlimits(limits, cgroup), cwd, argv: [python, step.file, ...(step.args ?? [])] };
  return [python, '-c', assetText('sandbox/py/launch.py'), JSON.stringify(cfg)];
}

export async function spawnJailed(a: SpawnArgs, wrapArgv: (cgroup: boolean) => string[]): Promise<StepResult> {
  const cg = await createCgroup({ maxProcs: a.limits.maxProcs + 8, memoryBytes: (a.limits.memoryMb + BASELINE_MB) * MB });
  const argv = wrapArgv(!!cg);
  const full = cg ? cg.wrap(argv) : argv;
  const t0 = performance.now();
  const [gate, ...rest] = gated(full);
  const child = spawn(gate, rest, { cwd: a.cwd, env: a.env, detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
  // Listened to before anything is awaited, so that neither is missed.
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('error', () => resolve({ code: 127, signal: null }));
    child.once('exit', (code, signal) => resolve({ code, signal }));
  });
  const out = new CappedOutput(a.limits.maxOutputBytes);
  const err = new CappedOutput(a.limits.maxOutputBytes);
  child.stdout.on('data', (c: Buffer) => out.push(c));
  child.stderr.on('data', (c: Buffer) => err.push(c));
  const streamsClosed = Promise.all([new Promise((r) => child.stdout.once('close', r)), new Promise((r) => child.stderr.once('close', r))]);
  const unreap = await reapGroup(child);

  const killGroup = () => {
    try {
      if (child.pid) process.kill(-child.pid, 'SIGKILL');
    } catch {
      // gone
    }
  };
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    killGroup();
    void cg?.killAll();
  }, a.limits.timeoutMs);

  const exit = await exited;
  clearTimeout(timer);
  // Whatever the step left behind (daemons, detached grandchildren) goes now.
  killGroup();
  unreap();
  await cg?.killAll();
  // Drained once every writer is dead; a bounded wait covers writers we could not see.
  await Promise.race([streamsClosed, new Promise((r) => setTimeout(r, 1000))]);
  child.stdout.destroy();
  child.stderr.destroy();
  const oom = (await cg?.oomKilled()) ?? false;
  await cg?.remove();

  const exitCode = exit.code ?? 128 + signalNumber(exit.signal);
  return {
    exitCode: timedOut ? 124 : exitCode,
    timedOut,
    stdout: out.text(),
    stderr: err.text() + limitNotes(a.limits, { oom, timedOut }),
    truncated: out.truncated || err.truncated,
    durationMs: Math.round(performance.now() - t0),
    backend: a.backend,
    ...(await workspaceCheck(a.workspace, a.limits)),
  };
}

function signalNumber(sig: NodeJS.Signals | null): number {
  const table: Record<string, number> = { SIGKILL: 9, SIGTERM: 15, SIGSEGV: 11, SIGABRT: 6, SIGXFSZ: 25, SIGXCPU: 24, SIGBUS: 7, SIGINT: 2 };
  return sig ? (table[sig] ?? 1) : 0;
}
