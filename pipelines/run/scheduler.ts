// Runs a plan: nodes start as soon as their inputs are ready, at most
// `concurrency` at a time; a node placed on a host (`on:`) also waits for
// enough free GPUs on a matching host (run/hosts.ts). A failure stops new work (or, with keepGoing, only
// its dependents); an abort lets running nodes clean up and leaves the cache
// as it was plus whatever finished.
import { Interrupted, UserError } from '../../core/errors.js';
import { dotted, valuePos } from '../../core/source.js';
import { closeShelf, openShelf } from '../../sandbox/warm/shelf.js';
import type { InputNode } from '../../stages/contract.js';
import { getStage } from '../../stages/registry.js';
import type { LockEntry } from '../cache/lockfile.js';
import { settleBoard } from '../cache/boards.js';
import type { Manifest } from '../cache/manifest.js';
import type { Plan, PlannedNode } from '../plan.js';
import { executeNode, type NodeOutcome } from './execute.js';
import { HostPool, type Held, type LentGpus } from './hosts.js';
import { lockEntry, lockRecorder, type RecordEntries } from './lock-record.js';
import { NodeFailure } from './node-failure.js';
import type { Reporter, RunSummary } from './reporter.js';

export interface RunOptions {
  concurrency?: number;
  keepGoing?: boolean;
  signal?: AbortSignal;
  reporter: Reporter;
}

export interface Failure {
  id: string;
  message: string;
  log?: string;
  tail?: string[];
}

export interface RunResult {
  summary: RunSummary;
  failures: Failure[];
  manifests: Map<string, Manifest>;
}

type State = 'pending' | 'running' | 'done' | 'failed' | 'skipped';

export async function runPlan(plan: Plan, opts: RunOptions): Promise<RunResult> {
  // Warm jails pass from stage to stage of the run (sandbox/warm/shelf.ts); none outlives it.
  openShelf();
  try {
    return await runNodes(plan, opts);
  } finally {
    await closeShelf();
  }
}

async function runNodes(plan: Plan, opts: RunOptions): Promise<RunResult> {
  const t0 = Date.now();
  refuseHomeless(plan);
  await plan.store.registerLockfile(plan.lockfile);
  await plan.store.sweepStaging();
  const run = new Run(plan, opts);
  await run.settleUpFront();
  await run.loop();
  return run.finish(t0);
}

/**
 * A node to run whose sandbox label no host carries would otherwise run its episodes here, on a machine
 * the file did not choose: refused before anything starts (the file loaded with a warning).
 */
function refuseHomeless(plan: Plan): void {
  const exp = plan.experiment;
  const homeless = plan.nodes.filter(
    (p) => p.action === 'run' && p.node.stage.sandbox && !p.node.stage.sandbox.hosts.length,
  );
  if (!homeless.length) return;
  const stages = [...new Set(homeless.map((p) => p.node.stage))];
  throw new UserError(
    stages.map((st) => {
      const path = ['stages', st.id, 'sandbox', 'on'];
      return {
        pos: valuePos(exp.origins, path),
        path: dotted(path),
        message: `no host named or labelled "${st.sandbox!.on}" to run this node's sandboxes on (${homeless.filter((p) => p.node.stage === st).length} node(s) to run); add such a host to the settings' hosts:, or run them here with -S ${dotted(['stages', st.id, 'sandbox'])}=null`,
      };
    }),
  );
}

/** One run of a plan: each node's state, what finished, and the nodes running now. */
class Run {
  private readonly reporter: Reporter;
  private readonly concurrency: number;
  private readonly signal: AbortSignal;
  private readonly pool: HostPool;
  private readonly record: RecordEntries;
  private readonly byId: Map<string, PlannedNode>;
  private readonly state = new Map<string, State>();
  private readonly manifests = new Map<string, Manifest>();
  private readonly failures: Failure[] = [];
  private readonly summary: RunSummary = {
    ran: 0,
    rescored: 0,
    cached: 0,
    failed: 0,
    skipped: 0,
    ms: 0,
    interrupted: false,
  };
  private readonly running = new Map<string, Promise<void>>();
  // Host faults so far, per node: their hosts are passed over while another matching host is left.
  private readonly faults = new Map<string, { hosts: Set<string>; notes: string[] }>();
  private stopping = false;

  constructor(
    private readonly plan: Plan,
    private readonly opts: RunOptions,
  ) {
    const settings = plan.experiment.settings;
    this.reporter = opts.reporter;
    this.concurrency = Math.max(1, opts.concurrency ?? settings.concurrency);
    this.signal = opts.signal ?? new AbortController().signal;
    this.pool = new HostPool(settings.hosts);
    this.record = lockRecorder(plan);
    this.byId = new Map(plan.nodes.map((p) => [p.node.id, p]));
    this.reporter.begin(plan.nodes, this.concurrency);
  }

  /** Cached and unwanted nodes settle up front. */
  async settleUpFront(): Promise<void> {
    for (const p of this.plan.nodes) {
      this.state.set(p.node.id, 'pending');
      if (p.action === 'skip') this.skip(p.node.id, p.reason);
      else if (p.action === 'cached') {
        const m = await this.plan.store.manifest(p.node.key);
        if (!m) continue; // removed since planning: it runs after all
        this.manifests.set(p.node.id, m);
        this.state.set(p.node.id, 'done');
        this.summary.cached++;
        this.reporter.cached(p.node.id, 'cached');
      }
    }
  }

  /** Starts nodes as they become ready until none runs; once aborted, waits only for running nodes to clean up. */
  async loop(): Promise<void> {
    const aborted = abortPromise(this.signal);
    for (;;) {
      if (this.signal.aborted) this.stopping = true;
      if (!this.stopping)
        for (const p of this.plan.nodes) {
          if (this.running.size >= this.concurrency) break;
          if (this.state.get(p.node.id) === 'pending') this.tryStart(p);
        }
      if (!this.running.size) break;
      const running = [...this.running.values()];
      await Promise.race(this.signal.aborted ? running : [...running, aborted]);
    }
  }

  async finish(t0: number): Promise<RunResult> {
    for (const p of this.plan.nodes)
      if (this.state.get(p.node.id) === 'pending')
        this.skip(p.node.id, this.signal.aborted ? 'interrupted' : 'not started: an earlier node failed');
    // Cached nodes go into the lock file too; a full run also forgets nodes the experiment no longer has.
    const cachedEntries: Record<string, LockEntry> = {};
    for (const [id, m] of this.manifests) cachedEntries[id] = lockEntry(m);
    // Cached nodes' curves get their names too (a node's own run linked them as it finished).
    const { store, experiment } = this.plan;
    await Promise.all(
      [...this.manifests].map(([id, m]) => settleBoard(store.root, experiment.name, id, store.entryDir(m.key))),
    );
    const full = this.plan.nodes.every((p) => p.action !== 'skip');
    await this.record(cachedEntries, full ? new Set(this.plan.nodes.map((p) => p.node.id)) : undefined);
    this.summary.interrupted = this.signal.aborted;
    this.summary.ms = Date.now() - t0;
    await this.reporter.end(this.summary);
    return { summary: this.summary, failures: this.failures, manifests: this.manifests };
  }

  private skip(id: string, why: string): void {
    this.state.set(id, 'skipped');
    this.summary.skipped++;
    this.reporter.skipped(id, why);
  }

  /** Starts a pending node whose inputs are done and whose host and sandbox GPUs are free; skips it when an input will never be. */
  private tryStart(p: PlannedNode): void {
    const id = p.node.id;
    // A node rescored from another of this plan waits for that one's entry as for an input.
    const waitsOn = p.from && 'node' in p.from ? [...p.node.inputs, p.from.node] : p.node.inputs;
    const bad = waitsOn.find((i) => this.state.get(i) === 'failed' || this.state.get(i) === 'skipped');
    if (bad !== undefined) {
      this.skip(id, `needs ${bad}, which ${this.state.get(bad) === 'failed' ? 'failed' : 'did not run'}`);
      return;
    }
    if (!waitsOn.every((i) => this.state.get(i) === 'done')) return;
    const on = p.node.stage.on;
    // Waits for a matching host with enough free GPUs; later nodes may start meanwhile.
    const held = on === undefined ? undefined : this.pool.take(on, p.node.stage.gpus, this.faults.get(id)?.hosts);
    if (on !== undefined && !held) return;
    // Its sandboxes' GPUs too, from the same hosts' pool, so that no device is held twice.
    const sb = p.node.stage.sandbox;
    const perRun = sb?.gpusPerRun ?? 0;
    const runs = sb && perRun > 0 ? (getStage(p.node.kind)?.sandboxRuns?.(p.node.params as never) ?? 1) : 0;
    const lent = sb && perRun > 0 ? this.pool.lendSandboxes(sb.hosts, perRun, runs) : undefined;
    if (sb && perRun > 0 && !lent) {
      held?.give();
      return;
    }
    this.launch(p, held, lent);
  }

  private launch(p: PlannedNode, held?: Held, lent?: LentGpus): void {
    const id = p.node.id;
    this.state.set(id, 'running');
    const job = executeNode({
      exp: this.plan.experiment,
      node: p.node,
      inputs: this.inputsOf(p),
      store: this.plan.store,
      forced: p.forced,
      signal: this.signal,
      reporter: this.reporter,
      host: held?.placement,
      sandboxGpus: lent,
      notes: this.faults.get(id)?.notes,
      rescoreFrom: this.rescoreFrom(p),
      record: (m) => this.record({ [id]: lockEntry(m) }),
    })
      .then((outcome) => this.finished(id, outcome))
      .catch((err: unknown) => this.failed(p, err))
      .finally(() => {
        held?.give();
        lent?.give();
        this.running.delete(id);
      });
    this.running.set(id, job);
  }

  private inputsOf(p: PlannedNode): InputNode[] {
    return p.node.inputs.map((i) => {
      const n = this.byId.get(i)!.node;
      const m = this.manifests.get(i)!;
      return {
        name: n.stage.id,
        id: n.id,
        key: n.key,
        dir: this.plan.store.entryDir(n.key),
        metrics: m.metrics,
        variant: n.variant,
      };
    });
  }

  private rescoreFrom(p: PlannedNode): { key: string; dir: string } | undefined {
    if (p.action !== 'rescore' || !p.from) return undefined;
    const key = 'key' in p.from ? p.from.key : this.manifests.get(p.from.node)?.key;
    return key ? { key, dir: this.plan.store.entryDir(key) } : undefined;
  }

  private finished(id: string, outcome: NodeOutcome): void {
    this.manifests.set(id, outcome.manifest);
    this.state.set(id, 'done');
    if (outcome.status === 'cached') {
      this.summary.cached++;
      this.reporter.cached(id, 'cached (finished by another run)');
    } else {
      // A rescore whose source had gone ran in full: its manifest says which it was.
      const rescored = outcome.manifest.rescoredFrom !== undefined;
      if (rescored) this.summary.rescored++;
      else this.summary.ran++;
      this.reporter.done(id, outcome.manifest.durationMs, outcome.manifest.metrics, rescored);
    }
  }

  private failed(p: PlannedNode, err: unknown): void {
    const id = p.node.id;
    if (err instanceof Interrupted) return this.skip(id, 'interrupted');
    if (this.retryElsewhere(p, err)) return;
    this.state.set(id, 'failed');
    this.summary.failed++;
    const f: Failure =
      err instanceof NodeFailure
        ? { id, message: err.message, log: err.logPath, tail: err.tail }
        : { id, message: err instanceof Error ? (err.stack ?? err.message) : String(err) };
    this.failures.push(f);
    this.reporter.failed(id, f.message);
    if (!this.opts.keepGoing) this.stopping = true;
  }

  /** A node whose own host failed under it goes back to pending, to try another matching host, while it has retries. */
  private retryElsewhere(p: PlannedNode, err: unknown): boolean {
    const id = p.node.id;
    const retries = p.node.stage.retries;
    const tries = this.faults.get(id) ?? { hosts: new Set<string>(), notes: [] };
    if (!(err instanceof NodeFailure) || !err.hostFault || tries.notes.length >= retries) return false;
    if (this.stopping || this.signal.aborted) return false;
    tries.hosts.add(err.hostFault);
    tries.notes.push(`try ${tries.notes.length + 2} of ${retries + 1}: host ${err.hostFault} failed (${err.message})`);
    this.faults.set(id, tries);
    this.state.set(id, 'pending');
    this.reporter.waiting(
      id,
      `host ${err.hostFault} failed; trying again (${tries.notes.length} of ${retries} retries) on another matching host where there is one`,
    );
    return true;
  }
}

function abortPromise(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener('abort', () => resolve(), { once: true });
  });
}
