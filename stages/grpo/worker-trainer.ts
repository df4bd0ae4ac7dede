// `trainer: worker`: where the policy is served and trained. A `provider:
// worker` policy gets a worker started for the node (stages/worker.ts) whose
// checkpoints live in the node's item store, so that they outlive a crash:
// every finished step has its checkpoint there, and a rerun loads the one of
// the last finished step before going on. With `worker_url:` or an `openai`
// entry the running worker is used as it is. The tokenizer identity comes
// from /health and goes with every batch; the worker refuses (409) a batch
// made with another. On a host (`on:`) the started worker runs in a
// container there: each step's checkpoint is fetched back into the item
// store (and deleted in the container), and a resumed run sends the last one
// up before loading it.
import { cp, mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { EnvError, InternalError } from '../../core/errors.js';
import type { ModelSpec } from '../../core/models.js';
import { waitAtMost } from '../../core/proc.js';
import { TrainerClient, type TokenizerIdentity, type UpdateResult } from '../../gpu/trainer/client.js';
import type { StageContext } from '../contract.js';
import { serveModel, type ServedModel } from '../shared/worker.js';
import { CHECKPOINT_DIR } from '../shared/weights.js';
import type { Batch } from './batch.js';
import { retention } from './retention.js';

export const stepTag = (k: number) => `step-${String(k).padStart(5, '0')}`;

export interface WorkerTrainer {
  /** The policy as an OpenAI-compatible endpoint (the started worker's, or the entry's). */
  readonly spec: ModelSpec;
  readonly client: TrainerClient;
  readonly tokenizer: TokenizerIdentity;
  /**
   * Aborted once the worker this node started has exited: the step's rollouts, which sample from it, stop
   * then instead of retrying a dead endpoint (seven seconds of backoff per request). Never aborted for a
   * worker this node did not start.
   */
  readonly gone: AbortSignal;
  /** One optimiser step on the batch, then a checkpoint when one is due (always, for a worker started here). */
  step(batch: Batch, k: number, signal: AbortSignal): Promise<Record<string, unknown>>;
  /**
   * After step k is recorded: drops the checkpoints that neither the resume, keep_checkpoints nor `selected` (the
   * step best-val hands on so far) needs (retention.ts).
   */
  recorded(k: number, selected?: number): Promise<void>;
  /** Step k failed: when the worker this node started has died, that is the reason to give. */
  failure(k: number, err: unknown): Promise<unknown>;
  stop(): Promise<void>;
}

export interface WorkerTrainerOptions {
  policy: string;
  workerUrl?: string;
  checkpointEvery: number;
  /** Marked checkpoints kept besides the resume point (0: all). */
  keepCheckpoints: number;
  steps: number;
  /** A started worker recomputes activations in the backward pass (as sft does by default). */
  gradientCheckpointing: boolean;
  /** The longest sequence a batch may hold (the trajectory's context): what a started worker's memory check plans for. */
  planTokens: number;
}

/** Where a started worker's checkpoints go: the node's item store, which survives a crash of the node. */
export const workerCkptDir = (ctx: Pick<StageContext<unknown>, 'items'>) => join(ctx.items.root, 'worker-checkpoints');

/** Whether this node starts the policy's worker itself (a `provider: worker` entry and no worker_url). */
export const startsWorker = (
  ctx: Pick<StageContext<unknown>, 'models'>,
  o: Pick<WorkerTrainerOptions, 'policy' | 'workerUrl'>,
) => ctx.models[o.policy]?.provider === 'worker' && !o.workerUrl;

/** The policy's worker as this node reaches it; `served` when this node started it. */
interface Connection {
  client: TrainerClient;
  spec: ModelSpec;
  served?: ServedModel;
  /** Aborted once a worker started here has exited. */
  gone: AbortSignal;
  exited(): boolean;
}

/** Starts the policy's worker for this node, or connects to the running one the entry or worker_url names. */
async function connect(ctx: StageContext<unknown>, o: WorkerTrainerOptions, local: boolean): Promise<Connection> {
  const gone = new AbortController();
  if (!local && ctx.host) {
    throw new EnvError(
      `on: ${ctx.host.name} places the trainer worker this node starts, and this node starts none: give it a provider: worker policy and no worker_url, or remove on:`,
    );
  }
  if (!local) {
    const spec = ctx.models[o.policy];
    const client = new TrainerClient(o.workerUrl ?? (spec.base_url ?? '').replace(/\/v1\/?$/, ''));
    return { client, spec, gone: gone.signal, exited: () => false };
  }
  const ckptDir = workerCkptDir(ctx);
  await mkdir(ckptDir, { recursive: true });
  const served = await serveModel(ctx, o.policy, {
    ckptDir,
    args: [
      ...(o.gradientCheckpointing ? ['--gradient-checkpointing'] : []),
      '--check-memory',
      '--plan-tokens',
      String(o.planTokens),
    ],
  });
  ctx.log(`trainer worker: gradient checkpointing ${served.worker?.health.gradient_checkpointing ? 'on' : 'off'}`);
  let exited = false;
  void served.worker?.exited.then(() => {
    exited = true;
    gone.abort(new Error('the trainer worker exited'));
  });
  if (!served.trainer) {
    await served.stop();
    throw new InternalError(`the worker started for ${o.policy} has no trainer client`);
  }
  return { client: served.trainer, spec: served.spec, served, gone: gone.signal, exited: () => exited };
}

/**
 * A started worker loads the checkpoint of the step it resumes after; then every worker must say which tokenizer
 * it has (its identity goes with every batch, and the worker refuses a batch made with another).
 */
async function resumeAndIdentify(
  ctx: StageContext<unknown>,
  c: Connection,
  resumeAfter: number,
): Promise<TokenizerIdentity> {
  if (c.served && resumeAfter > 0) {
    const dir = join(workerCkptDir(ctx), stepTag(resumeAfter));
    if (!existsSync(dir))
      throw new EnvError(`cannot resume after step ${resumeAfter}: its worker checkpoint ${dir} is missing`);
    const r = await c.client.load(c.served.onHost ? await c.served.onHost.push(dir) : dir, ctx.signal);
    ctx.log(`trainer worker: resumed from ${dir} (worker step ${r.step})`);
  }
  const h = await c.client.health(ctx.signal);
  ctx.log(`trainer worker: ${h.status}, step ${h.step}${h.model ? `, ${h.model}` : ''}`);
  if (!h.tokenizer_sha256 || !h.chat_template_sha256) {
    throw new EnvError(
      `the trainer worker at ${c.client.url} reports no tokenizer identity (tokenizer_sha256, chat_template_sha256) on /health; exact-token batches need it`,
    );
  }
  return { tokenizer_sha256: h.tokenizer_sha256, chat_template_sha256: h.chat_template_sha256 };
}

/** How a failed call is reported: a dead worker shows up as refused connections, so say so, with the step it died in. */
function failures(c: Connection) {
  const onHost = c.served?.onHost;
  // An error a guarded call already described (its step, and what it was doing) reaches the step's own
  // failure handler again: it keeps that description rather than becoming "during the step".
  const described = new WeakSet<object>();
  const failure = (k: number, err: unknown, what = 'the step') => {
    if (err instanceof Error && described.has(err)) return err;
    // The container may still run while its host no longer answers: the error names the host all the same.
    if (!c.exited())
      return onHost && err instanceof Error && !err.message.includes(`host ${onHost.hostName}`)
        ? Object.assign(err, { message: `host ${onHost.hostName}: ${err.message}` })
        : err;
    const note = onHost?.exitNote();
    return new EnvError(
      note
        ? `step ${k}: ${note} during ${what} (the worker's last lines are in this node's log)`
        : `step ${k}: the trainer worker exited during ${what} (its last lines are in this node's log)`,
    );
  };
  // A container's end is reported by its engine, which may come a moment after the refused request.
  const settled = async () => {
    if (onHost && c.served?.worker && !c.exited()) await waitAtMost(c.served.worker.exited, 5000);
  };
  const guard = async <T>(k: number, what: string, call: () => Promise<T>): Promise<T> => {
    try {
      return await call();
    } catch (err) {
      await settled();
      const e = failure(k, err, what);
      if (e instanceof Error) described.add(c.exited() ? e : Object.assign(e, { message: `step ${k}: ${e.message}` }));
      throw e;
    }
  };
  return { guard, failure: async (k: number, err: unknown) => (await settled(), failure(k, err)) };
}

/**
 * Connects to (or starts) the policy's worker. `resumeAfter`: the last step
 * an earlier attempt finished, whose checkpoint a started worker loads.
 */
export async function openWorkerTrainer(
  ctx: StageContext<unknown>,
  o: WorkerTrainerOptions,
  resumeAfter: number,
): Promise<WorkerTrainer> {
  const local = startsWorker(ctx, o);
  const ckptDir = workerCkptDir(ctx);
  const c = await connect(ctx, o, local);
  const { client, served } = c;
  try {
    const tokenizer = await resumeAndIdentify(ctx, c, resumeAfter);
    const { guard, failure } = failures(c);
    const keep = (k: number) => k % o.checkpointEvery === 0 || k === o.steps;
    return {
      spec: c.spec,
      client,
      tokenizer,
      gone: c.gone,
      async step(batch, k, signal) {
        const update: UpdateResult & Record<string, unknown> = await guard(k, 'the update', () =>
          client.update(batch, signal),
        );
        if (local || keep(k))
          update.saved = (await guard(k, 'the save', () => client.save(k, stepTag(k), signal))).path;
        const host = served?.onHost;
        if (host && typeof update.saved === 'string') {
          const saved = update.saved;
          const here = join(ckptDir, stepTag(k));
          await guard(k, 'fetching the checkpoint', () => host.pull(saved, here));
          await host.drop(saved);
          update.saved = here;
        }
        return update;
      },
      recorded: async (k, selected) => (local ? await dropCheckpoints(ckptDir, k, o, selected) : undefined),
      failure,
      async stop() {
        await served?.stop();
      },
    };
  } catch (err) {
    await served?.stop();
    throw err;
  }
}

/** After step k is recorded: drops the checkpoints that neither the resume nor keep_checkpoints needs. */
async function dropCheckpoints(ckptDir: string, k: number, o: WorkerTrainerOptions, selected?: number): Promise<void> {
  const present = (await readdir(ckptDir)).flatMap((n) => (/^step-(\d+)$/.exec(n) ? [Number(n.slice(5))] : []));
  const { remove, trim } = retention(present, k, {
    every: o.checkpointEvery,
    steps: o.steps,
    keep: o.keepCheckpoints,
    selected,
  });
  for (const j of remove) await rm(join(ckptDir, stepTag(j)), { recursive: true, force: true });
  for (const j of trim) await rm(join(ckptDir, stepTag(j), 'optimizer.pt'), { force: true });
}

/**
 * The node's `checkpoint/`: the worker checkpoint of the step it hands on (the last, or the one `select: best-val`
 * chose), which a later stage serves with `checkpoint: <this stage>`. A remote worker's checkpoint is on its own
 * disk; the node then records where.
 */
export async function publishCheckpoint(
  ctx: StageContext<unknown>,
  o: WorkerTrainerOptions,
  chosen: { k: number; saved?: string },
): Promise<void> {
  const from = startsWorker(ctx, o) ? join(workerCkptDir(ctx), stepTag(chosen.k)) : chosen.saved;
  if (from && existsSync(join(from, 'state.json'))) {
    await cp(from, join(ctx.outDir, CHECKPOINT_DIR), { recursive: true });
    return;
  }
  if (startsWorker(ctx, o)) throw new EnvError(`the worker checkpoint of step ${chosen.k} (${from}) is missing`);
  await writeFile(
    join(ctx.outDir, 'worker-checkpoint.json'),
    JSON.stringify({ path: chosen.saved ?? null, step: chosen.k }) + '\n',
  );
  ctx.log(
    `step ${chosen.k}'s checkpoint is on the worker's disk${chosen.saved ? ` at ${chosen.saved}` : ''}; this node holds no checkpoint/`,
  );
}
