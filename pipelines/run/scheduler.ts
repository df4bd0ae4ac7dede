// Runs a plan: nodes start as soon as their inputs are ready, at most
// `concurrency` at a time; a node placed on a host (`on:`) also waits for
// enough free GPUs on a matching host (run/hosts.ts). A failure stops new work (or, with keepGoing, only
// its dependents); an abort lets running nodes clean up and leaves the cache
// as it was plus whatever finished.
import { VERSION } from '../../core/version.js';
import { Interrupted, UserError } from '../../core/errors.js';
import { dotted, valuePos } from '../../core/source.js';
import type { InputNode } from '../../stages/contract.js';
import { getStage } from '../../stages/registry.js';
import { updateLockfile, type LockEntry } from '../cache/lockfile.js';
import type { Manifest } from '../cache/manifest.js';
import { sha256 } from '../../core/hash.js';
import { closeShelf, openShelf } from '../../sandbox/warm/shelf.js';
import type { Plan } from '../plan.js';
import { executeNode } from './execute.js';
import { NodeFailure } from './node-failure.js';
import { HostPool, type Held, type LentGpus } from './hosts.js';
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
  const { store, experiment: exp } = plan;
  const reporter = opts.reporter;
  const concurrency = Math.max(1, opts.concurrency ?? exp.settings.concurrency);
  const signal = opts.signal ?? new AbortController().signal;
  const pool = new HostPool(exp.settings.hosts);
  // A node to run whose sandbox label no host carries would otherwise run its episodes here, on a machine
  // the file did not choose: refused before anything starts (the file loaded with a warning).
  const homeless = plan.nodes.filter(
    (p) => p.action === 'run' && p.node.stage.sandbox && !p.node.stage.sandbox.hosts.length,
  );
  if (homeless.length) {
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

  await store.registerLockfile(plan.lockfile);
  await store.sweepStaging();
  const lockMutex = store.lockPath(`lockfile-${sha256(plan.lockfile).slice(0, 24)}`);
  const record = (entries: Record<string, LockEntry>, prune?: Set<string>) =>
    updateLockfile(plan.lockfile, lockMutex, { experiment: exp.name, mlepipe: VERSION }, (lf) => {
      if (prune) for (const id of Object.keys(lf.nodes)) if (!prune.has(id)) delete lf.nodes[id];
      Object.assign(lf.nodes, entries);
    });

  const state = new Map<string, State>();
  const manifests = new Map<string, Manifest>();
  const failures: Failure[] = [];
  const summary: RunSummary = { ran: 0, cached: 0, failed: 0, skipped: 0, ms: 0, interrupted: false };
  const byId = new Map(plan.nodes.map((p) => [p.node.id, p]));
  reporter.begin(plan.nodes, concurrency);

  // Cached and unwanted nodes settle up front.
  for (const p of plan.nodes) {
    state.set(p.node.id, 'pending');
    if (p.action === 'skip') {
      state.set(p.node.id, 'skipped');
      summary.skipped++;
      reporter.skipped(p.node.id, p.reason);
    } else if (p.action === 'cached') {
      const m = await store.manifest(p.node.key);
      if (!m) continue; // removed since planning: it runs after all
      manifests.set(p.node.id, m);
      state.set(p.node.id, 'done');
      summary.cached++;
      reporter.cached(p.node.id, 'cached');
    }
  }

  let stopping = false;
  const running = new Map<string, Promise<void>>();
  const inputsOf = (id: string): InputNode[] =>
    byId.get(id)!.node.inputs.map((i) => {
      const n = byId.get(i)!.node;
      const m = manifests.get(i)!;
      return {
        name: n.stage.id,
        id: n.id,
        key: n.key,
        dir: store.entryDir(n.key),
        metrics: m.metrics,
        variant: n.variant,
      };
    });

  const rescoreFrom = (p: (typeof plan.nodes)[number]) => {
    if (p.action !== 'rescore' || !p.from) return undefined;
    const key = 'key' in p.from ? p.from.key : manifests.get(p.from.node)?.key;
    return key ? { key, dir: store.entryDir(key) } : undefined;
  };

  // Host faults so far, per node: their hosts are passed over while another matching host is left.
  const faults = new Map<string, { hosts: Set<string>; notes: string[] }>();

  const launch = (id: string, held?: Held, lent?: LentGpus) => {
    const p = byId.get(id)!;
    state.set(id, 'running');
    const job = executeNode({
      exp,
      node: p.node,
      inputs: inputsOf(id),
      store,
      forced: p.reason === 'forced',
      signal,
      reporter,
      host: held?.placement,
      sandboxGpus: lent,
      notes: faults.get(id)?.notes,
      rescoreFrom: rescoreFrom(p),
      record: (m) => record({ [id]: lockEntry(m) }),
    })
      .then(async (outcome) => {
        manifests.set(id, outcome.manifest);
        state.set(id, 'done');
        if (outcome.status === 'cached') {
          summary.cached++;
          reporter.cached(id, 'cached (finished by another run)');
        } else {
          summary.ran++;
          reporter.done(id, outcome.manifest.durationMs, outcome.manifest.metrics);
        }
      })
      .catch((err: unknown) => {
        if (err instanceof Interrupted) {
          state.set(id, 'skipped');
          summary.skipped++;
          reporter.skipped(id, 'interrupted');
          return;
        }
        const tries = faults.get(id) ?? { hosts: new Set<string>(), notes: [] };
        if (
          err instanceof NodeFailure &&
          err.hostFault &&
          tries.notes.length < p.node.stage.retries &&
          !stopping &&
          !signal.aborted
        ) {
          tries.hosts.add(err.hostFault);
          tries.notes.push(
            `try ${tries.notes.length + 2} of ${p.node.stage.retries + 1}: host ${err.hostFault} failed (${err.message})`,
          );
          faults.set(id, tries);
          state.set(id, 'pending');
          reporter.waiting(
            id,
            `host ${err.hostFault} failed; trying again (${tries.notes.length} of ${p.node.stage.retries} retries) on another matching host where there is one`,
          );
          return;
        }
        state.set(id, 'failed');
        summary.failed++;
        const f: Failure =
          err instanceof NodeFailure
            ? { id, message: err.message, log: err.logPath, tail: err.tail }
            : { id, message: err instanceof Error ? (err.stack ?? err.message) : String(err) };
        failures.push(f);
        reporter.failed(id, f.message);
        if (!opts.keepGoing) stopping = true;
      })
      .finally(() => {
        held?.give();
        lent?.give();
        running.delete(id);
      });
    running.set(id, job);
  };

  const aborted = abortPromise(signal);
  for (;;) {
    if (signal.aborted) stopping = true;
    if (!stopping) {
      for (const p of plan.nodes) {
        const id = p.node.id;
        if (running.size >= concurrency) break;
        if (state.get(id) !== 'pending') continue;
        // A node rescored from another of this plan waits for that one's entry as for an input.
        const waitsOn = p.from && 'node' in p.from ? [...p.node.inputs, p.from.node] : p.node.inputs;
        const ins = waitsOn.map((i) => state.get(i));
        if (ins.some((s) => s === 'failed' || s === 'skipped')) {
          const bad = waitsOn.find((i) => state.get(i) === 'failed' || state.get(i) === 'skipped')!;
          state.set(id, 'skipped');
          summary.skipped++;
          reporter.skipped(id, `needs ${bad}, which ${state.get(bad) === 'failed' ? 'failed' : 'did not run'}`);
          continue;
        }
        if (!ins.every((s) => s === 'done')) continue;
        const on = p.node.stage.on;
        // Waits for a matching host with enough free GPUs; later nodes may start meanwhile.
        const held = on === undefined ? undefined : pool.take(on, p.node.stage.gpus, faults.get(id)?.hosts);
        if (on !== undefined && !held) continue;
        // Its sandboxes' GPUs too, from the same hosts' pool, so that no device is held twice.
        const sb = p.node.stage.sandbox;
        const perRun = sb?.gpusPerRun ?? 0;
        const lent =
          sb && perRun > 0
            ? pool.lendSandboxes(sb.hosts, perRun, getStage(p.node.kind)?.sandboxRuns?.(p.node.params as never) ?? 1)
            : undefined;
        if (sb && perRun > 0 && !lent) {
          held?.give();
          continue;
        }
        launch(id, held, lent);
      }
    }
    if (!running.size) break;
    // Once aborted, wait only for running nodes to clean up.
    await Promise.race(signal.aborted ? [...running.values()] : [...running.values(), aborted]);
  }
  for (const p of plan.nodes) {
    if (state.get(p.node.id) === 'pending') {
      state.set(p.node.id, 'skipped');
      summary.skipped++;
      reporter.skipped(p.node.id, signal.aborted ? 'interrupted' : 'not started: an earlier node failed');
    }
  }

  // Cached nodes go into the lock file too; a full run also forgets nodes the experiment no longer has.
  const cachedEntries: Record<string, LockEntry> = {};
  for (const [id, m] of manifests) cachedEntries[id] = lockEntry(m);
  const full = plan.nodes.every((p) => p.action !== 'skip');
  await record(cachedEntries, full ? new Set(plan.nodes.map((p) => p.node.id)) : undefined);

  summary.interrupted = signal.aborted;
  summary.ms = Date.now() - t0;
  await reporter.end(summary);
  return { summary, failures, manifests };
}

function lockEntry(m: Manifest): LockEntry {
  return {
    key: m.key,
    kind: m.kind,
    version: m.version,
    params: m.params,
    inputs: m.inputs,
    extras: m.extras,
    variant: m.variant,
    outputs: { files: m.files.length, bytes: m.files.reduce((s, f) => s + f.size, 0) },
    metrics: m.metrics,
    finished: m.finished,
    durationMs: m.durationMs,
  };
}

function abortPromise(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener('abort', () => resolve(), { once: true });
  });
}
