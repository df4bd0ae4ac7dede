// Warm executors: a jail whose Python has already imported numpy, pandas and
// scikit-learn and forks one child per step (sandbox/py/warm.py). Each
// session gets a jail of its own, used by nobody before or after it, so
// nothing leaks between trajectories.
import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { assetText } from '../../core/assets.js';
import { EnvError, StageFailure } from '../../core/errors.js';
import { linkTree } from '../../core/fs.js';
import { onceAborted } from '../../core/proc.js';
import { finishStep, workspaceCheck, type Ending } from '../limits.js';
import type { Limits, Step, StepResult } from '../types.js';
import { publicDir } from '../workspace.js';
import { newSlot, type JailHandle, type JailLauncher, type Slot } from './jail.js';
import { onFirstUse } from './modules.js';
import { Answers, isRunAnswer, killRequest, runRequest, type KillReason } from './protocol.js';

export { DEFAULT_WARM_MODULES } from './modules.js';

const START_TIMEOUT_MS = 60_000;
const RESET_TIMEOUT_MS = 30_000;
/** The server enforces each step's timeout itself; past it by this much, the host gives up on the server. */
const ANSWER_GRACE_MS = 15_000;
/** How long a server may take to answer once told to kill its step, before its jail is killed instead. */
const KILL_GRACE_MS = 3000;

export class WarmExecutor {
  private readonly answers: Answers;
  private stderrTail: string[] = [];
  private dead = false;
  /** The server reads its own cgroup's OOM count (a jail on another engine), so the host's watch is not needed. */
  private ownOom = false;

  private constructor(
    readonly slot: Slot,
    readonly kind: 'warm-bwrap' | 'warm-docker',
    private readonly jail: JailHandle,
    readonly limits: Limits,
    /** What its server has imported (or tried to: an interpreter without a module skips it). */
    private readonly modules: Set<string>,
  ) {
    this.answers = new Answers(jail.stdout);
    jail.stderr.on('data', (c: Buffer) => {
      this.stderrTail.push(c.toString());
      if (this.stderrTail.length > 20) this.stderrTail.shift();
    });
    // A jail that died under a request reports it through its answers; the write error itself says nothing more.
    jail.stdin.on('error', () => {});
    void jail.exited.then(() => (this.dead = true));
  }

  /** Starts a jail and waits for its server's hello; `signal` gives up at once, killing the jail. */
  static async start(
    launcher: JailLauncher,
    python: string,
    modules: readonly string[],
    limits: Limits,
    signal?: AbortSignal,
  ): Promise<WarmExecutor> {
    const slot = await newSlot();
    let jail: JailHandle;
    try {
      jail = await launcher.start(slot, limits, [
        python,
        '-c',
        assetText('sandbox/py/warm.py'),
        JSON.stringify({ modules, later: onFirstUse(modules), ...launcher.serverConfig }),
      ]);
    } catch (err) {
      await rm(slot.root, { recursive: true, force: true });
      throw err;
    }
    const ex = new WarmExecutor(slot, launcher.kind, jail, limits, new Set(modules));
    const hello = await ex.answers.next(START_TIMEOUT_MS, signal);
    if (!hello?.ready) {
      await ex.close();
      signal?.throwIfAborted();
      throw new StageFailure(
        `the warm executor did not start: ${ex.stderrTail.join('').trim().split('\n').slice(-3).join(' | ') || 'no answer'}`,
      );
    }
    ex.ownOom = typeof hello.oom_count === 'number';
    return ex;
  }

  get alive(): boolean {
    return !this.dead;
  }

  /**
   * Has the server import what it has not yet of `modules` (a jail handed on to a stage that preloads more);
   * `signal` gives up waiting, as for a start.
   */
  async preload(modules: readonly string[], signal?: AbortSignal): Promise<void> {
    const more = modules.filter((m) => !this.modules.has(m));
    if (!more.length) return;
    this.send({ op: 'preload', modules: more });
    const answer = await this.answers.next(START_TIMEOUT_MS, signal);
    if (!answer?.preloaded)
      throw new StageFailure(
        `the warm executor did not import ${more.join(', ')}: ${answer?.error ? String(answer.error) : 'no answer'}`,
      );
    for (const m of more) this.modules.add(m);
  }

  private send(request: Record<string, unknown>): void {
    this.jail.stdin.write(JSON.stringify(request) + '\n');
  }

  /**
   * Shows the task's public files in this jail's read-only view (a jail on another engine reads the host's task
   * store). Linked, not copied: the view is mounted read-only, so the jail cannot change the task's files
   * through the links, and reset() only unlinks them.
   */
  async assign(task: string): Promise<void> {
    const pub = await publicDir(task);
    if (this.jail.far) return this.jail.far.assign(pub, this.remove);
    await linkTree(pub, this.slot.pub);
  }

  /** Deletes workspace files in the jail (for a jail on another engine, whose workspace is a copy). */
  private readonly remove = async (paths: string[]): Promise<void> => {
    this.send({ op: 'remove', paths });
    const answer = await this.answers.next(RESET_TIMEOUT_MS);
    if (!answer?.removed)
      throw new EnvError(
        `the warm executor did not remove workspace files: ${answer?.error ? String(answer.error) : 'no answer'}`,
      );
  };

  /** Runs one step; the OOM killer striking in the jail, or `signal`, has the server kill it at once. */
  async run(step: Step, over?: Partial<Limits>, signal?: AbortSignal): Promise<StepResult> {
    const limits = { ...this.limits, ...over };
    const t0 = performance.now();
    const failed = (message: string, end: Ending): StepResult =>
      finishStep(
        {
          exitCode: 125,
          stdout: '',
          stderr: message && `[mlepipe: ${message}]`,
          truncated: false,
          durationMs: Math.round(performance.now() - t0),
          backend: this.kind,
        },
        limits,
        end,
      );
    if (signal?.aborted) return failed('', { interrupted: true });
    if (this.dead) {
      await this.jail.far?.check();
      return failed('the warm executor has stopped; open a new session', {});
    }
    // A jail on another engine gets what changed here since its last step (a lost host throws, as for cold steps).
    await this.jail.far?.push(this.remove);

    let killed: KillReason | undefined;
    const killSent = new AbortController();
    const kill = (reason: KillReason) => {
      if (killed) return;
      killed = reason;
      this.send(killRequest(reason));
      killSent.abort();
    };
    // A server that counts its own OOM kills reads the count after the last step's processes are gone. The
    // host's watch of another engine is its event stream, which comes late: an event of the last step's
    // teardown would arrive during this one and end it as out of memory.
    const unwatch = this.ownOom ? () => {} : await this.jail.watchOom(() => kill('oom'));
    // Checked again after the wait above, and from here on synchronously: a kill must follow its run request.
    if (signal?.aborted) {
      unwatch();
      return failed('', { interrupted: true });
    }
    this.send(runRequest(step, limits, this.jail.countsProcesses));
    const unabort = signal ? onceAborted(signal, () => kill('interrupted')) : () => {};
    // The server enforces the timeout; this wait covers a server that was itself killed or hung.
    let answer = await this.answers.next(limits.timeoutMs + ANSWER_GRACE_MS, killSent.signal);
    if (!answer && killed) answer = await this.answers.next(KILL_GRACE_MS);
    unwatch();
    unabort();
    const durationMs = Math.round(performance.now() - t0);

    if (!isRunAnswer(answer)) return this.unanswered(answer, killed, durationMs, limits, failed);
    await this.jail.far?.pull();
    const end = {
      timedOut: answer.timedOut,
      oomKilled: answer.killed === 'oom' || killed === 'oom',
      interrupted: answer.killed === 'interrupted',
    };
    // The step's own time, from its fork to its end, as the server measured it.
    const raw = {
      exitCode: answer.exitCode,
      stdout: answer.stdout,
      stderr: answer.stderr,
      truncated: answer.truncated,
      durationMs: answer.durationMs,
      backend: this.kind,
    };
    return { ...finishStep(raw, limits, end), ...(await workspaceCheck(this.slot.ws, limits)) };
  }

  /**
   * A step the server gave no result for: the jail is closed, and the step fails with what is known of why. A jail
   * on a host that is gone says nothing of the step: the run is the host's loss, not the agent's.
   */
  private async unanswered(
    answer: Record<string, unknown> | null,
    killed: KillReason | undefined,
    durationMs: number,
    limits: Limits,
    failed: (message: string, end: Ending) => StepResult,
  ): Promise<StepResult> {
    const fault = this.jail.far?.check().then(
      () => undefined,
      (err: unknown) => err,
    );
    await this.close();
    if (await fault) throw await fault;
    const why = answer?.error
      ? `warm executor error: ${String(answer.error)}`
      : `the warm executor ${killed ? 'did not stop the step when told' : 'stopped answering'}; its jail was killed`;
    return failed(why, {
      interrupted: killed === 'interrupted',
      oomKilled: killed === 'oom',
      timedOut: !answer && durationMs >= limits.timeoutMs,
    });
  }

  /**
   * Readies the jail for another session (sandbox/py/warm.py `reset`): the
   * server kills every process but itself, wipes /workspace, /tmp and
   * /dev/shm and drops IPC objects, then says what is left; the host empties
   * the public view. True only when nothing at all is left, checked on both
   * sides; otherwise the caller closes the jail.
   */
  async reset(): Promise<boolean> {
    if (this.dead) return false;
    this.send({ op: 'reset' });
    const answer = await this.answers.next(RESET_TIMEOUT_MS);
    if (!answer?.reset || !Array.isArray(answer.left) || answer.left.length) return false;
    await this.jail.far?.clear();
    const seen = await readdir(this.slot.ws).catch(() => null);
    if (!seen || seen.length !== 1 || seen[0] !== 'public') return false;
    for (const name of await readdir(this.slot.pub))
      await rm(join(this.slot.pub, name), { recursive: true, force: true });
    return this.alive;
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
