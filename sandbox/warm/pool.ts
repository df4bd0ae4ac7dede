// A pool of warm executors: jails started ahead of need, so that opening a
// session does not wait for the imports. Shutting it down kills jails still
// starting instead of waiting for them.
import { setMaxListeners } from 'node:events';
import { onceAborted } from '../../core/proc.js';
import { DEFAULT_LIMITS, type Backend, type Limits, type Session, type SessionOptions } from '../types.js';
import { DEFAULT_WARM_MODULES, WarmExecutor } from './executor.js';
import type { JailLauncher } from './jail.js';
import { shelve, unshelve } from './shelf.js';

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
  /** Aborting it shuts the pool down at once: its spare jails go while the sessions are still closing. */
  signal?: AbortSignal;
  /**
   * Hand a closed session's jail, once reset and found clean, to the next
   * session instead of starting another (default true): a jail start costs
   * the interpreter and its imports. False gives every session a jail nobody used before.
   */
  reuse?: boolean;
  /**
   * What jails this pool can share with other stages' pools of the run (sandbox/warm/shelf.ts): the same
   * key means the same launcher, interpreter and limits. Unset: the pool's jails are its own.
   */
  shelf?: string;
}

/** A Backend whose sessions run in warm jails, started ahead of need. */
export class WarmPool implements Backend {
  readonly name: Backend['name'];
  private idle: WarmExecutor[] = [];
  private starting = 0;
  private broken = false;
  private closed = false;
  /** Aborted at shutdown: jails still starting are killed then (every start listens on it, as many as run at once). */
  private readonly stopping = unlimited(new AbortController());
  private waiters: Array<(ex: WarmExecutor | null) => void> = [];
  private inflight = new Set<Promise<unknown>>();
  private readonly limits: Limits;
  private shut?: Promise<void>;
  /** Jails held by open sessions. */
  private inUse = 0;

  constructor(private readonly opts: WarmPoolOptions) {
    this.name = opts.fallback.name;
    this.limits = { ...DEFAULT_LIMITS, ...opts.limits };
    if (opts.signal) onceAborted(opts.signal, () => void this.shutdown());
  }

  /**
   * Starts jails until `size` are ready or starting, and one for each session waiting. Reused jails come
   * back: then jails in use count too, so a stage never has more jails than `size` or its sessions at once.
   */
  fill(): void {
    const reuse = this.opts.reuse !== false;
    const have = () => this.idle.length + this.starting + (reuse ? this.inUse : 0);
    const want = Math.max(this.opts.size ?? 2, this.waiters.length + (reuse ? this.inUse : 0));
    while (!this.broken && !this.closed && have() < want) {
      this.starting++;
      const started = this.launch()
        .then(
          async (ex) => {
            if (this.closed) return ex.close();
            const w = this.waiters.shift();
            if (w) w(ex);
            else this.idle.push(ex);
          },
          (err: Error) => {
            if (this.closed) return;
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

  /** A jail an earlier stage of the run left on the shelf, given what this pool preloads; else a new one. */
  private async launch(): Promise<WarmExecutor> {
    const modules = this.opts.modules ?? DEFAULT_WARM_MODULES;
    const start = () => {
      this.started++;
      return WarmExecutor.start(this.opts.launcher, this.opts.python, modules, this.limits, this.stopping.signal);
    };
    const kept = this.opts.shelf === undefined ? undefined : unshelve(this.opts.shelf);
    if (!kept) return start();
    try {
      await kept.preload(modules, this.stopping.signal);
      this.handed++;
      return kept;
    } catch {
      // It could not take the imports (it died meanwhile, or the pool is shutting down): a jail of its own instead.
      await kept.close();
      return start();
    }
  }

  /** The next ready executor (null: fall back to cold starts); `signal` gives up waiting. */
  private take(signal?: AbortSignal): Promise<WarmExecutor | null> {
    const ex = this.idle.shift();
    if (ex) return Promise.resolve(ex);
    if (this.broken || this.closed) return Promise.resolve(null);
    return new Promise((resolve, reject) => {
      const waiter = (got: WarmExecutor | null) => {
        stop();
        resolve(got);
      };
      this.waiters.push(waiter);
      const stop = signal
        ? onceAborted(signal, () => {
            this.waiters = this.waiters.filter((w) => w !== waiter);
            reject(signal.reason);
          })
        : () => {};
      this.fill();
    });
  }

  async open(opts: SessionOptions): Promise<Session> {
    opts.signal?.throwIfAborted();
    let ex = await this.take(opts.signal);
    while (ex && !ex.alive) {
      void ex.close();
      ex = await this.take(opts.signal);
    }
    if (ex) this.inUse++;
    this.fill();
    if (!ex) return this.opts.fallback.open(opts);
    try {
      await ex.assign(opts.task);
    } catch (err) {
      this.inUse--;
      await ex.close();
      throw err;
    }
    const { limits, signal } = opts;
    let closed: Promise<void> | undefined;
    return {
      backend: ex.kind,
      workspace: ex.slot.ws,
      run: (step, over) => ex.run(step, { ...limits, ...over }, signal),
      close: () => (closed ??= this.release(ex)),
    };
  }

  /** A session's jail after the session: reset and kept for the next one, or closed. */
  private async release(ex: WarmExecutor): Promise<void> {
    const keep = this.opts.reuse !== false && !this.closed && (await ex.reset()) && !this.closed;
    this.inUse--;
    if (!keep) {
      await ex.close();
      // A jail that could not be reused leaves room for a fresh one for whoever waits.
      this.fill();
      return;
    }
    this.reused++;
    const w = this.waiters.shift();
    if (w) w(ex);
    else this.idle.push(ex);
  }

  /** Sessions served by a jail an earlier session used (after its reset). */
  reused = 0;
  /** Jails started (warm servers launched), successful or not. */
  started = 0;
  /** Jails taken from the shelf, which an earlier stage's pool left there. */
  handed = 0;

  /** Whether idle jails go on the shelf at shutdown: not when interrupted, nor when sessions must not share jails. */
  private get shelving(): boolean {
    return this.opts.shelf !== undefined && this.opts.reuse !== false && !this.opts.signal?.aborted;
  }

  /** Shelves or closes the spare jails and kills those still starting; once, however often it is called. */
  shutdown(): Promise<void> {
    this.shut ??= (async () => {
      this.closed = true;
      this.stopping.abort();
      for (const w of this.waiters.splice(0)) w(null);
      // Jails still starting were told to stop (above) and close themselves; that is quick.
      await Promise.all([...this.inflight]);
      const spare = this.idle.splice(0).filter((ex) => !(this.shelving && shelve(this.opts.shelf!, ex)));
      await Promise.all(spare.map((ex) => ex.close()));
    })();
    return this.shut;
  }
}

/** A controller whose signal takes any number of listeners without Node's leak warning. */
function unlimited(c: AbortController): AbortController {
  setMaxListeners(0, c.signal);
  return c;
}
