// Runs one node: take its key's lock, build the entry in a staging folder,
// publish it atomically, record it in the lock file. Whatever happens, the
// staging folder goes and the lock is released.
import { setMaxListeners } from 'node:events';
import { dirname } from 'node:path';
import { Interrupted } from '../../core/errors.js';
import { listFiles } from '../../core/fs.js';
import { choosePython } from '../../core/python.js';
import { VERSION } from '../../core/version.js';
import type { HostPlacement, InputNode, Metrics, StageContext, StageResult } from '../../stages/contract.js';
import { getStage } from '../../stages/registry.js';
import { dropBoard, linkBoard, settleBoard } from '../cache/boards.js';
import { dropItems } from '../cache/items.js';
import type { Held } from '../cache/locks.js';
import type { Manifest } from '../cache/manifest.js';
import type { CacheStore } from '../cache/store.js';
import { damageReason } from '../cache/verify.js';
import type { KeyedNode } from '../compile/keys.js';
import type { Experiment } from '../config/types.js';
import { sandboxPlacement, type LentGpus } from './hosts.js';
import { NodeFailure, nodeFailure } from './node-failure.js';
import { NodeLog } from './node-log.js';
import type { Reporter } from './reporter.js';

export interface NodeOutcome {
  status: 'done' | 'cached';
  manifest: Manifest;
}

export interface ExecuteArgs {
  exp: Experiment;
  node: KeyedNode;
  inputs: InputNode[];
  store: CacheStore;
  /** Run whatever the cache holds: `fresh` also drops the node's finished items first (--force), `items` keeps them (--rebuild). */
  forced?: 'fresh' | 'items';
  signal: AbortSignal;
  reporter: Reporter;
  /** The host the scheduler placed the node on (`on:`), with the GPUs it holds there. */
  host?: HostPlacement;
  /** The GPUs its host sandboxes took from the hosts' pool (sandbox: { gpus_per_run }). */
  sandboxGpus?: LentGpus;
  /** Lines the node's log starts with (why this is another try). */
  notes?: readonly string[];
  /** A finished entry to rebuild this one from (plan action rescore): the stage's rescore runs instead of its work. */
  rescoreFrom?: { key: string; dir: string };
  /** Records a new entry in the lock file; called while the key is still locked, so gc never sees it unreferenced. */
  record(manifest: Manifest): Promise<void>;
}

/** The entry a node is rebuilt from, with the metrics its rescore starts from. */
type RescoreSource = { key: string; dir: string; metrics: Metrics };

/** What the stage's work left in the staging folder, and when it ran. */
interface Built {
  result: StageResult | void;
  started: Date;
  finished: Date;
  from?: RescoreSource;
}

export async function executeNode(a: ExecuteArgs): Promise<NodeOutcome> {
  const { node, store, reporter } = a;
  const held = await store.lock(node.key, a.signal, () =>
    reporter.waiting(node.id, 'waiting: another run is working on this node'),
  );
  if (!held) throw new Interrupted();
  // A run killed while building this key left its staging folder: ours to remove now that we hold the key.
  await store.sweepStaging(node.key);
  let staged: string | undefined;
  let log: NodeLog | undefined;
  try {
    // Checked again under the lock: a damaged entry is never served, and its rebuild replaces it.
    const found = a.forced ? undefined : await store.check(node.key);
    if (found?.state === 'ok') return { status: 'cached', manifest: found.manifest };
    if (found?.state === 'damaged') reporter.waiting(node.id, `${damageReason(found.problems)}; rebuilding it`);
    reporter.started(node.id, { rescore: a.rescoreFrom !== undefined, log: store.logPath(node.key) });
    log = await NodeLog.open(store.logPath(node.key), (line) => reporter.log(node.id, line));
    if (a.forced === 'fresh') {
      const dropped = await dropItems(store.items(node.key).root);
      if (dropped)
        log.line(`mlepipe: --force: dropped the ${dropped} item(s) an earlier attempt finished; every item runs again`);
    }
    staged = await store.staging(node.key);
    // Curves a running node writes are watched by name, from its staging folder until it is published.
    await linkBoard(store.root, a.exp.name, node.id, staged);
    const built = await build(a, held, staged, log);
    const manifest = manifestOf(
      node,
      built,
      await listFiles(staged, (rel) => rel === 'manifest.json', { mtimes: true }),
    );
    if (a.forced || found?.state === 'damaged') await store.replace(staged, manifest);
    else await store.commit(staged, manifest);
    staged = undefined;
    await settleBoard(store.root, a.exp.name, node.id, store.entryDir(node.key));
    await a.record(manifest);
    return { status: 'done', manifest };
  } finally {
    if (staged) await Promise.all([store.discard(staged), dropBoard(store.root, a.exp.name, node.id, staged)]);
    await log?.close();
    await held.release();
  }
}

/** Runs the node's stage (or its rescore) into `staged`; a failure becomes a NodeFailure with the log's tail. */
async function build(a: ExecuteArgs, held: Held, staged: string, log: NodeLog): Promise<Built> {
  for (const note of a.notes ?? []) log.line(`mlepipe: ${note}`);
  if (a.host) log.line(`mlepipe: on host ${a.host.name}${gpuNote(a.host)}`);
  const python = choosePython(a.exp.settings.python);
  // Nodes that run Python carry its identity in their extras; say so when it is the fallback.
  if (python.note && hasPython(a.node.extras)) log.line(`mlepipe: ${python.note}`);
  const signal = AbortSignal.any([a.signal, held.lost]);
  // Every rollout, sandbox step and model request of the node listens on it; dozens at once are expected.
  setMaxListeners(0, signal);
  const stage = getStage(a.node.kind)!;
  const from = await rescoreSource(a, stage.rescore !== undefined && !a.forced, log);
  const started = new Date();
  let result: StageResult | void;
  try {
    const ctx = stageContext(a, { python: python.path, staged, signal, log });
    result = from ? await stage.rescore!.run(ctx, from) : await stage.run(ctx);
  } catch (err) {
    if (a.signal.aborted) throw new Interrupted();
    if (held.lost.aborted)
      throw new NodeFailure('lost its cache lock to another run (was the event loop blocked?)', log.path, log.tail);
    throw nodeFailure(err, log, signal, a.host?.name);
  }
  if (a.signal.aborted) throw new Interrupted();
  return { result, started, finished: new Date(), from };
}

/** The entry to rescore from, when the plan chose one and it is still whole (it may have been collected since). */
async function rescoreSource(a: ExecuteArgs, usable: boolean, log: NodeLog): Promise<RescoreSource | undefined> {
  if (!a.rescoreFrom) return undefined;
  const source = usable ? await a.store.check(a.rescoreFrom.key) : undefined;
  if (source?.state !== 'ok') {
    log.line(`mlepipe: the entry ${a.rescoreFrom.key.slice(0, 12)} to rescore from is gone; running the node in full`);
    return undefined;
  }
  log.line(
    `mlepipe: rescoring from ${source.manifest.node} (${a.rescoreFrom.key.slice(0, 12)}): only post-hoc params differ`,
  );
  return { ...a.rescoreFrom, metrics: source.manifest.metrics };
}

function stageContext(
  a: ExecuteArgs,
  run: { python: string; staged: string; signal: AbortSignal; log: NodeLog },
): StageContext<unknown> {
  const { node, exp, store } = a;
  return {
    node: { id: node.id, name: node.stage.id, key: node.key, variant: node.variant },
    params: node.params,
    experimentDir: dirname(exp.file),
    projectRoot: exp.settings.projectRoot,
    python: run.python,
    sandbox: exp.settings.sandbox,
    ray: exp.settings.ray,
    tracking: { logger: exp.settings.logger, experiment: exp.name },
    cacheRoot: store.root,
    inputs: a.inputs,
    models: exp.models,
    rewards: exp.rewards,
    outDir: run.staged,
    items: store.items(node.key),
    signal: run.signal,
    log: run.log.line,
    progress: (p) => a.reporter.progress(node.id, p),
    resumed: (r) => a.reporter.resumed(node.id, r.kept, r.total, r.unit),
    host: a.host,
    ...(node.stage.sandbox ? sandboxPlacement(node.stage.sandbox, exp.settings.hosts, a.sandboxGpus) : {}),
  };
}

function manifestOf(node: KeyedNode, built: Built, files: Manifest['files']): Manifest {
  return {
    key: node.key,
    node: node.id,
    kind: node.kind,
    version: node.version,
    params: node.params as Record<string, unknown>,
    inputs: node.inputKeys as Record<string, string>,
    extras: node.extras,
    variant: node.variant as Record<string, unknown>,
    files,
    started: built.started.toISOString(),
    finished: built.finished.toISOString(),
    durationMs: built.finished.getTime() - built.started.getTime(),
    metrics: built.result?.metrics ?? {},
    mlepipe: VERSION,
    ...(node.baseKey ? { baseKey: node.baseKey } : {}),
    ...(built.from ? { rescoredFrom: built.from.key } : {}),
  };
}

function hasPython(extras: unknown): boolean {
  return typeof extras === 'object' && extras !== null && 'python' in extras;
}

function gpuNote(h: HostPlacement): string {
  const g = h.gpus;
  if (!g) return '';
  return 'ids' in g ? ` (GPUs ${g.ids.join(', ')})` : ` (${g.count} GPU${g.count === 1 ? '' : 's'})`;
}
