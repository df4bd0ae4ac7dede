// Warm executors: a jail whose Python has already imported numpy, pandas and
// scikit-learn and forks one child per step (sandbox/py/warm.py). Each
// session gets a jail of its own, used by nobody before or after it, so
// nothing leaks between trajectories; a pool keeps jails started ahead so
// that opening a session does not wait for the imports either.
import { spawn } from 'node:child_process';
import { cp, mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { assetText } from '../core/assets.js';
import { gated, reapGroup } from '../core/reaper.js';
import { bwrapArgv } from './backends/bwrap.js';
import type { Readable, Writable } from 'node:stream';
import { createCgroup } from './cgroup.js';
import { MB, workspaceCheck } from './limits.js';
import { launcherRlimits } from './spawn.js';
import { DEFAULT_LIMITS, type Backend, type Limits, type Session, type SessionOptions, type Step, type StepResult } from './types.js';
import { publicDir } from './workspace.js';

export const DEFAULT_WARM_MODULES = [
  'numpy',
  'pandas',
  'sklearn',
  'sklearn.ensemble',
  'sklearn.linear_model',
  'sklearn.model_selection',
  'sklearn.metrics',
  'sklearn.preprocessing',
];
/** The server itself (interpreter plus preloaded modules) on top of a step's memory cap. */
const SERVER_MB = 1024;

/** A started jail: the server's standard streams, and how to end it. */
export interface JailHandle {
  stdin: Writable;
  stdout: Readable;
  stderr: Readable;
  /** Settles when the jail's main process ends. */
  exited: Promise<void>;
  /** True when something outside the jail caps its processes (a cgroup, Docker's pids limit). */
  countsProcesses: boolean;
  stop(): Promise<void>;
}

/** Something that starts a jail running `argv` over a slot (bwrap here; docker in backends/docker.ts). */
export interface JailLauncher {
  readonly kind: 'warm-bwrap' | 'warm-docker';
  start(slot: Slot, limits: Limits, argv: string[]): Promise<JailHandle>;
}

/** Host folders a warm jail sees: ws/ as /workspace, pub/ as /workspace/public (read-only). */
export interface Slot {
  root: string;
  ws: string;
  pub: string;
}

async function newSlot(): Promise<Slot> {
  const root = await mkdtemp(join(tmpdir(), 'mlepipe-warm-'));
  const ws = join(root, 'ws');
  const pub = join(root, 'pub');
  await mkdir(join(ws, 'public'), { recursive: true });
  await mkdir(pub);
  return { root, ws, pub };
}

export const bwrapJails = (): JailLauncher => ({
  kind: 'warm-bwrap',
  async start(slot, limits, argv) {
    const cgroup = await createCgroup({ maxProcs: limits.maxProcs + 16, memoryBytes: (limits.memoryMb + SERVER_MB) * MB });
    const full = bwrapArgv(slot.ws, slot.pub, limits, argv);
    const cmd = cgroup ? cgroup.wrap(full) : full;
    const [gate, ...rest] = gated(cmd);
    const proc = spawn(gate, rest, { stdio: ['pipe', 'pipe', 'pipe'], detached: true, env: { PATH: process.env.PATH ?? '/usr/bin:/bin' } });
    const exited = new Promise<void>((r) => proc.once('exit', () => r()));
    // The server reads its requests after the gate's line.
    const unreap = await reapGroup(proc, { keepStdin: true });
    return {
      stdin: proc.stdin,
      stdout: proc.stdout,
      stderr: proc.stderr,
      exited,
      countsProcesses: !!cgroup,
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

export class WarmExecutor {
  private lines: AsyncIterator<string>;
  private stderrTail: string[] = [];
  private dead = false;

  private constructor(
    readonly slot: Slot,
    readonly kind: 'warm-bwrap' | 'warm-docker',
    private readonly jail: JailHandle,
    readonly limits: Limits,
  ) {
    this.lines = createInterface({ input: jail.stdout })[Symbol.asyncIterator]();
    jail.stderr.on('data', (c: Buffer) => {
      this.stderrTail.push(c.toString());
      if (this.stderrTail.length > 20) this.stderrTail.shift();
    });
    void jail.exited.then(() => (this.dead = true));
  }

  static async start(launcher: JailLauncher, python: string, modules: readonly string[], limits: Limits, startTimeoutMs = 60_000): Promise<WarmExecutor> {
    const slot = await newSlot();
    const cfg = JSON.stringify({ modules });
    const jail = await launcher.start(slot, limits, [python, '-c', assetText('sandbox/py/warm.py'), cfg]);
    const ex = new WarmExecutor(slot, launcher.kind, jail, limits);
    const hello = await ex.next(startTimeoutMs);
    if (!hello || !(hello as { ready?: boolean }).ready) {
      await ex.close();
      throw new Error(`the warm executor did not start: ${ex.stderrTail.join('').trim().split('\n').slice(-3).join(' | ') || 'no answer'}`);
    }
    return ex;
  }

  get alive(): boolean {
    return !this.dead;
  }

  private async next(timeoutMs: number): Promise<Record<string, unknown> | null> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<null>((r) => (timer = setTimeout(() => r(null), timeoutMs)));
    const line = await Promise.race([this.lines.next().then((r) => (r.done ? null : r.value)), timeout]);
    clearTimeout(timer);
    if (line === null) return null;
    try {
      return JSON.parse(line) as Record<string, unknown>;
    } catch {
      return null;
    }
  }

  /** Copies the task's public files into this jail's read-only view. */
  async assign(task: string): Promise<void> {
    const pub = await publicDir(task);
    for (const name of await readdir(pub)) await cp(join(pub, name), join(this.slot.pub, name), { recursive: true });
  }

  async run(step: Step, over?: Partial<Limits>): Promise<StepResult> {
    const limits = { ...this.limits, ...over };
    const t0 = performance.now();
    const fail = (message: string): StepResult => ({
      exitCode: 125,
      timedOut: false,
      stdout: '',
      stderr: `[mlepipe: ${message}]`,
      truncated: false,
      durationMs: Math.round(performance.now() - t0),
      backend: this.kind,
    });
    if (this.dead) return fail('the warm executor has stopped; open a new session');
    const req = {
      op: 'run',
      file: step.file,
      args: step.args ?? [],
      timeout_s: limits.timeoutMs / 1000,
      memory_mb: limits.memoryMb,
      max_output: limits.maxOutputBytes,
      rlimits: launcherRlimits(limits, this.jail.countsProcesses),
    };
    this.jail.stdin.write(JSON.stringify(req) + '\n');
    // The server enforces the timeout (and may first spend up to 10 s reaping what an earlier step left);
    // this watchdog covers a server that was itself killed or hung.
    const answer = await this.next(limits.timeoutMs + 15_000);
    if (!answer || typeof answer.exitCode !== 'number') {
      await this.close();
      const r = fail(answer?.error ? `warm executor error: ${String(answer.error)}` : 'the warm executor stopped answering; its jail was killed');
      return { ...r, timedOut: !answer, exitCode: answer ? 125 : 124 };
    }
    return { ...(answer as unknown as StepResult), backend: this.kind, ...(await workspaceCheck(this.slot.ws, limits)) };
  }

  async close(): Promise<void> {
    this.dead = true;
    try {
      this.jail.stdin.end();
    } catch {
      // closed
    }
    await this.jail.stop();
    await rm(this.slot.root, { recursive: true, force: true, maxRetries: 3 });
  }
}

export interface WarmPoolOptions {
  launcher: JailLauncher;
  python: string;
  modules?: readonly string[];
  /** Jails kept started and waiting (default 2, the default concurrency; 0 starts one per session on demand). */
  size?: number;
  limits?: Partial<Limits>;
  /** Where sessions go when a warm jail cannot start. */
  fallback: Backend;
  warn: (message: string) => void;
}

/** A Backend whose sessions run in warm jails, started ahead of need. */
export class WarmPool implements Backend {
  readonly name: Backend['name'];
  private idle: WarmExecutor[] = [];
  private starting = 0;
  private broken = false;
  private closed = false;
  private waiters: Array<(ex: WarmExecutor | null) => void> = [];
  private inflight = new Set<Promise<unknown>>();
  private readonly limits: Limits;

  constructor(private readonly opts: WarmPoolOptions) {
    this.name = opts.fallback.name;
    this.limits = { ...DEFAULT_LIMITS, ...opts.limits };
  }

  /** Starts jails until `size` are ready or starting (and one for each session waiting). */
  fill(): void {
    const size = Math.max(this.opts.size ?? 2, this.waiters.length);
    while (!this.broken && !this.closed && this.idle.length + this.starting < size) {
      this.starting++;
      const started = WarmExecutor.start(this.opts.launcher, this.opts.python, this.opts.modules ?? DEFAULT_WARM_MODULES, this.limits)
        .then(
          async (ex) => {
            if (this.closed) return ex.close();
            const w = this.waiters.shift();
            if (w) w(ex);
            else this.idle.push(ex);
          },
          (err: Error) => {
            if (!this.broken) this.opts.warn(`warm executor unavailable, falling back to cold starts: ${err.message}`);
            this.broken = true;
            for (const w of this.waiters.splice(0)) w(null);
          },
        )
        .finally(() => {
          this.starting--;
          this.inflight.delete(started);
        });
      this.inflight.add(started);
    }
  }

  private take(): Promise<WarmExecutor | null> {
    const ex = this.idle.shift();
    if (ex) return Promise.resolve(ex);
    if (this.broken) return Promise.resolve(null);
    return new Promise((resolve) => {
      this.waiters.push(resolve);
      this.fill();
    });
  }

  async open(opts: SessionOptions): Promise<Session> {
    let ex = await this.take();
    while (ex && !ex.alive) ex = await this.take();
    this.fill();
    if (!ex) return this.opts.fallback.open(opts);
    try {
      await ex.assign(opts.task);
    } catch (err) {
      await ex.close();
      throw err;
    }
    const sessionLimits = opts.limits;
    return {
      backend: ex.kind,
      workspace: ex.slot.ws,
      run: (step, over) => ex.run(step, { ...sessionLimits, ...over }),
      close: () => ex.close(),
    };
  }

  async shutdown(): Promise<void> {
    this.closed = true;
    for (const w of this.waiters.splice(0)) w(null);
    // Jails still starting close themselves once up (closed is set); wait for that.
    await Promise.all([...this.inflight]);
    await Promise.all(this.idle.splice(0).map((ex) => ex.close()));
  }
}
