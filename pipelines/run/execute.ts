// Runs one node: take its key's lock, build the entry in a staging folder,
// publish it atomically, record it in the lock file. Whatever happens, the
// staging folder goes and the lock is released.
import { setMaxListeners } from 'node:events';
import { createWriteStream, type WriteStream } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import { HostFault, Interrupted } from '../../core/errors.js';
import { listFiles } from '../../core/fs.js';
import { choosePython } from '../../core/python.js';
import { VERSION } from '../../core/version.js';
import type { HostPlacement, InputNode, Metrics, StageContext } from '../../stages/contract.js';
import { getStage } from '../../stages/registry.js';
import type { Manifest } from '../cache/manifest.js';
import type { CacheStore } from '../cache/store.js';
import { damageReason } from '../cache/verify.js';
import type { KeyedNode } from '../compile/keys.js';
import type { Experiment } from '../config/types.js';
import { sandboxPlacement, type LentGpus } from './hosts.js';
import type { Reporter } from './reporter.js';

export interface NodeOutcome {
  status: 'done' | 'cached';
  manifest: Manifest;
}

export class NodeFailure extends Error {
  constructor(
    message: string,
    readonly logPath: string,
    readonly tail: string[],
    /** The host that failed under the node, when that is why it failed. */
    readonly hostFault?: string,
  ) {
    super(message);
    this.name = 'NodeFailure';
  }
}

export interface ExecuteArgs {
  exp: Experiment;
  node: KeyedNode;
  inputs: InputNode[];
  store: CacheStore;
  forced: boolean;
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

export async function executeNode(a: ExecuteArgs): Promise<NodeOutcome> {
  const { node, store, reporter } = a;
  const held = await store.lock(node.key, a.signal, () =>
    reporter.waiting(node.id, 'waiting: another run is working on this node'),
  );
  if (!held) throw new Interrupted();
  // A run killed while building this key left its staging folder: ours to remove now that we hold the key.
  await store.sweepStaging(node.key);
  let staged: string | undefined;
  let log: WriteStream | undefined;
  const tail: string[] = [];
  const logPath = store.logPath(node.key);
  try {
    // Checked again under the lock: a damaged entry is never served, and its rebuild replaces it.
    const found = a.forced ? undefined : await store.check(node.key);
    if (found?.state === 'ok') return { status: 'cached', manifest: found.manifest };
    if (found?.state === 'damaged') reporter.waiting(node.id, `${damageReason(found.problems)}; rebuilding it`);
    reporter.started(node.id);
    await mkdir(dirname(logPath), { recursive: true });
    log = createWriteStream(logPath, { flags: 'w' });
    const writeLog = (line: string) => {
      log?.write(line + '\n');
      tail.push(line);
      if (tail.length > 20) tail.shift();
      reporter.log(node.id, line);
    };
    for (const note of a.notes ?? []) writeLog(`mlepipe: ${note}`);
    if (a.host) writeLog(`mlepipe: on host ${a.host.name}${gpuNote(a.host)}`);
    staged = await store.staging(node.key);
    const python = choosePython(a.exp.settings.python);
    // Nodes that run Python carry its identity in their extras; say so when it is the fallback.
    if (python.note && hasPython(node.extras)) writeLog(`mlepipe: ${python.note}`);
    const signal = AbortSignal.any([a.signal, held.lost]);
    // Every rollout, sandbox step and model request of the node listens on it; dozens at once are expected.
    setMaxListeners(0, signal);
    const stage = getStage(node.kind)!;
    // Rescored only from an entry that is still whole (it may have been collected since the plan).
    const source = a.rescoreFrom && stage.rescore && !a.forced ? await store.check(a.rescoreFrom.key) : undefined;
    if (a.rescoreFrom && source?.state !== 'ok')
      writeLog(
        `mlepipe: the entry ${a.rescoreFrom.key.slice(0, 12)} to rescore from is gone; running the node in full`,
      );
    const from =
      source?.state === 'ok'
        ? { key: a.rescoreFrom!.key, dir: a.rescoreFrom!.dir, metrics: source.manifest.metrics }
        : undefined;
    const started = new Date();
    let result;
    try {
      const ctx: StageContext<unknown> = {
        node: { id: node.id, name: node.stage.id, key: node.key, variant: node.variant },
        params: node.params,
        experimentDir: dirname(a.exp.file),
        projectRoot: a.exp.settings.projectRoot,
        python: python.path,
        sandbox: a.exp.settings.sandbox,
        ray: a.exp.settings.ray,
        tracking: { logger: a.exp.settings.logger, experiment: a.exp.name },
        cacheRoot: store.root,
        inputs: a.inputs,
        models: a.exp.models,
        rewards: a.exp.rewards,
        outDir: staged,
        items: store.items(node.key),
        signal,
        log: writeLog,
        progress: (done, total) => reporter.progress(node.id, done, total),
        host: a.host,
        ...(node.stage.sandbox ? sandboxPlacement(node.stage.sandbox, a.exp.settings.hosts, a.sandboxGpus) : {}),
      };
      if (from)
        writeLog(
          `mlepipe: rescoring from ${source?.state === 'ok' ? source.manifest.node : ''} (${from.key.slice(0, 12)}): only post-hoc params differ`,
        );
      result = from ? await stage.rescore!.run(ctx, from) : await stage.run(ctx);
    } catch (err) {
      if (a.signal.aborted) throw new Interrupted();
      if (held.lost.aborted)
        throw new NodeFailure('lost its cache lock to another run (was the event loop blocked?)', logPath, tail);
      const message = err instanceof Error ? err.message : String(err);
      writeLog(`mlepipe: ${message}`);
      // Only the node's own host makes it a node retry; a sandbox host's fault reached here once no other host was left.
      throw new NodeFailure(
        message,
        logPath,
        tail,
        err instanceof HostFault && err.host === a.host?.name ? err.host : undefined,
      );
    }
    if (a.signal.aborted) throw new Interrupted();
    const finished = new Date();
    const metrics: Metrics = result?.metrics ?? {};
    const manifest: Manifest = {
      key: node.key,
      node: node.id,
      kind: node.kind,
      version: node.version,
      params: node.params as Record<string, unknown>,
      inputs: node.inputKeys as Record<string, string>,
      extras: node.extras,
      variant: node.variant as Record<string, unknown>,
      files: await listFiles(staged, (rel) => rel === 'manifest.json', { mtimes: true }),
      started: started.toISOString(),
      finished: finished.toISOString(),
      durationMs: finished.getTime() - started.getTime(),
      metrics,
      mlepipe: VERSION,
      ...(node.baseKey ? { baseKey: node.baseKey } : {}),
      ...(from ? { rescoredFrom: from.key } : {}),
    };
    if (a.forced || found?.state === 'damaged') await store.replace(staged, manifest);
    else await store.commit(staged, manifest);
    staged = undefined;
    await a.record(manifest);
    return { status: 'done', manifest };
  } finally {
    if (staged) await store.discard(staged);
    if (log) await new Promise<void>((r) => log!.end(r));
    await held.release();
  }
}

function hasPython(extras: unknown): boolean {
  return typeof extras === 'object' && extras !== null && 'python' in extras;
}

function gpuNote(h: HostPlacement): string {
  const g = h.gpus;
  if (!g) return '';
  return 'ids' in g ? ` (GPUs ${g.ids.join(', ')})` : ` (${g.count} GPU${g.count === 1 ? '' : 's'})`;
}
