// Warm grading servers (sandbox/py/grade_server.py): trusted host Pythons
// that imported the numeric stack once and fork per evaluator run. A grade
// then costs a fork (tens of ms) instead of an interpreter start plus
// imports (about a second). One pool per interpreter, shared by every stage
// of the process; a server is started when a grade finds none free (up to
// the pool's size), and while none is busy the servers hold no reference
// that would keep mlepipe from exiting. Each server's process group is
// announced to the watchdog, so none outlives mlepipe.
import { execa } from 'execa';
import { spawn, type ChildProcess } from 'node:child_process';
import { assetText } from '../core/assets.js';
import { gated, reapedUntilDone, reapGroup } from '../core/reaper.js';
import { threadEnv } from './output.js';
import { Answers } from './warm/protocol.js';
import { StageFailure } from '../core/errors.js';

export interface PyRun {
  exitCode: number;
  stdout: string;
  stderr: string;
  timedOut: boolean;
}

/** What grade servers import before forking: what evaluators use. */
const MODULES = ['numpy', 'pandas', 'scipy.stats', 'sklearn.metrics'];
const START_TIMEOUT_MS = 120_000;

/**
 * The environment of trusted Pythons, warm and cold alike: mlepipe's own
 * (PYTHONPATH included: an MLE-bench checkout or its packages may be found
 * through it), so that a grade never depends on which of the two ran it.
 */
function trustedEnv(): NodeJS.ProcessEnv {
  return { ...process.env, PYTHONDONTWRITEBYTECODE: '1', ...threadEnv(1) };
}

class Server {
  private readonly answers: Answers;
  private dead = false;
  private constructor(
    private readonly proc: ChildProcess,
    release: () => void,
  ) {
    this.answers = new Answers(proc.stdout!);
    proc.stderr!.on('data', () => {});
    proc.once('exit', () => {
      this.dead = true;
      release();
    });
    this.idle();
  }

  static async start(python: string): Promise<Server> {
    const argv = gated([python, '-c', assetText('sandbox/py/grade_server.py'), JSON.stringify({ modules: MODULES })]);
    const proc = spawn(argv[0], argv.slice(1), { env: trustedEnv(), detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
    const release = await reapGroup(proc, { keepStdin: true });
    const server = new Server(proc, release);
    server.busy();
    const hello = await server.answers.next(START_TIMEOUT_MS);
    server.idle();
    if (!hello?.ready) {
      server.kill();
      throw new StageFailure(`the grade server did not start (${python})`);
    }
    return server;
  }

  get alive(): boolean {
    return !this.dead;
  }

  /** A server without work must not keep the event loop (and so mlepipe) alive. */
  private idle(): void {
    this.proc.unref();
    for (const s of [this.proc.stdin, this.proc.stdout, this.proc.stderr])
      (s as unknown as { unref?: () => void } | null)?.unref?.();
  }

  private busy(): void {
    this.proc.ref();
    for (const s of [this.proc.stdin, this.proc.stdout, this.proc.stderr])
      (s as unknown as { ref?: () => void } | null)?.ref?.();
  }

  /** Runs `python SCRIPT ARGS` in a fork; undefined when the server died on the way (the caller runs it cold). */
  async run(
    script: string,
    args: readonly string[],
    cwd: string,
    timeoutMs: number,
    signal?: AbortSignal,
  ): Promise<PyRun | undefined> {
    this.busy();
    try {
      this.proc.stdin!.write(JSON.stringify({ id: 1, script, args, cwd, timeout_s: timeoutMs / 1000 }) + '\n');
      // The server enforces the timeout itself; the margin covers its answer. No answer (it died, hung, or
      // `signal` aborted): the server goes, and its fork with it.
      const a = (await this.answers.next(timeoutMs + 30_000, signal)) as {
        exit: number;
        stdout: string;
        stderr: string;
        timed_out: boolean;
      } | null;
      if (!a) {
        this.kill();
        return undefined;
      }
      return { exitCode: a.exit, stdout: a.stdout, stderr: a.stderr, timedOut: a.timed_out };
    } finally {
      this.idle();
    }
  }

  kill(): void {
    try {
      if (this.proc.pid) process.kill(-this.proc.pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
}

/** Servers for one interpreter: at most `size`, each serving one grade at a time. */
export class GradePool {
  private free: Server[] = [];
  private count = 0;
  private queue: (() => void)[] = [];
  constructor(
    readonly python: string,
    readonly size = 2,
  ) {}

  private async acquire(): Promise<Server> {
    for (;;) {
      const s = this.free.pop();
      if (s?.alive) return s;
      if (s) {
        this.count--;
        continue;
      }
      if (this.count < this.size) {
        this.count++;
        try {
          return await Server.start(this.python);
        } catch (err) {
          this.count--;
          throw err;
        }
      }
      await new Promise<void>((r) => this.queue.push(r));
    }
  }

  private releaseServer(s: Server): void {
    if (s.alive) this.free.push(s);
    else this.count--;
    this.queue.shift()?.();
  }

  /** Runs the script in a warm fork; undefined when no server could (the caller then runs it cold). */
  async run(
    script: string,
    args: readonly string[],
    cwd: string,
    timeoutMs: number,
    signal?: AbortSignal,
  ): Promise<PyRun | undefined> {
    let server: Server;
    try {
      server = await this.acquire();
    } catch {
      return undefined;
    }
    try {
      return await server.run(script, args, cwd, timeoutMs, signal);
    } finally {
      this.releaseServer(server);
    }
  }

  close(): void {
    for (const s of this.free) s.kill();
    this.free = [];
  }
}

const pools = new Map<string, GradePool>();

/** The process-wide pool for an interpreter (MLEPIPE_COLD_GRADES=1 turns warm grading off). */
export function gradePool(python: string): GradePool | undefined {
  if (process.env.MLEPIPE_COLD_GRADES === '1') return undefined;
  let p = pools.get(python);
  if (!p) pools.set(python, (p = new GradePool(python)));
  return p;
}

/**
 * Runs trusted host code (a task's evaluator) as `python SCRIPT ARGS` in
 * `cwd`: in a warm grade server's fork when one is available, else in a cold
 * interpreter. Output beyond 10 MB per stream is dropped.
 */
export async function runTrusted(
  python: string,
  script: string,
  args: readonly string[],
  o: { cwd: string; timeoutMs: number; signal?: AbortSignal },
): Promise<PyRun> {
  const warm = await gradePool(python)?.run(script, args, o.cwd, o.timeoutMs, o.signal);
  if (warm) return warm;
  o.signal?.throwIfAborted();
  const r = await reapedUntilDone(
    execa(python, [script, ...args], {
      cwd: o.cwd,
      reject: false,
      timeout: o.timeoutMs,
      cancelSignal: o.signal,
      maxBuffer: 10 * 1024 * 1024,
      env: trustedEnv(),
      extendEnv: false,
    }),
  );
  return { exitCode: r.exitCode ?? -1, stdout: String(r.stdout), stderr: String(r.stderr), timedOut: !!r.timedOut };
}
