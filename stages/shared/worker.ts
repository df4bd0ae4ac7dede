// A `provider: worker` model served for one node: the trainer worker starts
// when the node needs the model and stops when the node ends (its output in
// the node's log), and the node talks to it as to any OpenAI-compatible
// endpoint, plus the trainer protocol (update, score, save). A node placed
// on a host (`on:`) gets its worker in a container there
// (gpu/trainer/host.ts). An `openai` entry is used as it is.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { UserError } from '../../core/errors.js';
import type { ModelSpec } from '../../core/models.js';
import { TrainerClient } from '../../gpu/trainer/client.js';
import type { HostWorker } from '../../gpu/trainer/host.js';
import { startLocalWorker, type LocalWorker } from '../../gpu/trainer/local.js';
import { localPython } from '../../gpu/verl/job.js';
import type { StageContext } from '../contract.js';
import { deviceRequests } from './devices.js';
import { weightsFor } from './weights.js';

export interface ServedModel {
  /** The entry as an OpenAI-compatible endpoint (base_url set). */
  readonly spec: ModelSpec;
  /** The trainer protocol on the same server, when it is a worker. */
  readonly trainer?: TrainerClient;
  /** The started worker, when this node started one. */
  readonly worker?: LocalWorker;
  /** The same worker when it runs in a container on the node's host. */
  readonly onHost?: HostWorker;
  /** Where the worker writes checkpoints, as the worker sees the path. */
  readonly ckptDir?: string;
  /**
   * Brings a checkpoint the worker saved (`path` as /save answered) into
   * `localDir`: a copy out of the host's container, or nothing to do when the
   * worker already wrote it there.
   */
  collect(path: string, localDir: string): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Serves a `models:` entry for the node: starts a worker for a `worker` entry
 * (CPU threads default to 1: the sandbox shares the machine), or returns an
 * `openai` one as it is. Always call `stop()`.
 */
export async function serveModel(
  ctx: StageContext<unknown>,
  name: string,
  opts: { ckptDir?: string; resume?: string; threads?: number; args?: readonly string[] } = {},
): Promise<ServedModel> {
  const spec = ctx.models[name];
  if (!spec) throw new UserError(`no model named ${name} in models:`);
  if (spec.provider !== 'worker') return { spec, collect: async () => {}, stop: async () => {} };
  const weights = weightsFor(ctx, name, spec);
  if (ctx.host) return serveOnHost(ctx, name, spec, weights, opts);
  const ckptDir = opts.ckptDir ?? join(ctx.outDir, '.worker-checkpoints');
  const worker = await startLocalWorker({
    model: 'dir' in weights ? { dir: weights.dir } : { tiny: true, seed: weights.seed },
    ckptDir,
    resume: opts.resume,
    loraRank: spec.lora_rank,
    threads: opts.threads ?? 1,
    args: opts.args,
    log: (line) => ctx.log(`worker: ${line}`),
    signal: ctx.signal,
  });
  ctx.log(`trainer worker: ${worker.url}, serving ${worker.health.model ?? name}`);
  return {
    spec: asEndpoint(spec, worker),
    trainer: worker.client,
    worker,
    ckptDir,
    collect: async () => {},
    stop: () => worker.stop(),
  };
}

/**
 * A `models:` entry served for a node that only samples from it (an evaluation): a `serve: vllm` worker entry by
 * vLLM's OpenAI-compatible server started for the node (gpu/vllm/server.ts, .venv/verl's interpreter), any other as
 * serveModel serves it. Always call `stop()`.
 */
export async function serveForSampling(ctx: StageContext<unknown>, name: string): Promise<ServedModel> {
  const spec = ctx.models[name];
  if (spec?.provider !== 'worker' || spec.serve !== 'vllm') return serveModel(ctx, name);
  if (ctx.host)
    throw new UserError(
      `model ${name}: serve: vllm starts vLLM on this machine; a node placed on a host (on:) serves it with the trainer worker (leave serve: out)`,
    );
  const weights = weightsFor(ctx, name, spec);
  if (!('dir' in weights))
    throw new UserError(
      `model ${name}: serve: vllm serves a model folder (path:) or a full-weight checkpoint:, not tiny:`,
    );
  // A worker checkpoint keeps the weights in model/ and the tokenizer beside them; a path: is a model folder.
  const inCheckpoint = existsSync(join(weights.dir, 'model', 'config.json'));
  if (!inCheckpoint && !existsSync(join(weights.dir, 'config.json')))
    throw new UserError(
      `model ${name}: serve: vllm needs full weights (config.json); ${weights.dir} holds none (a LoRA adapter is served by the trainer worker)`,
    );
  const { startVllmServer } = await import('../../gpu/vllm/server.js');
  const server = await startVllmServer({
    model: inCheckpoint ? join(weights.dir, 'model') : weights.dir,
    tokenizer: inCheckpoint ? join(weights.dir, 'tokenizer') : undefined,
    name: spec.model,
    python: localPython(),
    log: (line) => ctx.log(`vllm: ${line}`),
    signal: ctx.signal,
  });
  ctx.log(`vLLM server: ${server.baseUrl}, serving ${spec.model}`);
  return {
    spec: { ...spec, provider: 'openai', base_url: server.baseUrl },
    collect: async () => {},
    stop: () => server.stop(),
  };
}

/** The worker in a container on the node's host, with the GPUs the scheduler handed the node. */
async function serveOnHost(
  ctx: StageContext<unknown>,
  name: string,
  spec: ModelSpec,
  weights: ReturnType<typeof weightsFor>,
  opts: { threads?: number; args?: readonly string[] },
): Promise<ServedModel> {
  const host = ctx.host!;
  const { startHostWorker, DEFAULT_TRAINER_IMAGE } = await import('../../gpu/trainer/host.js');
  const worker = await startHostWorker({
    // The engine's address with what reaches it: an ssh:// host's key and known_hosts, a tcp:// host's TLS files.
    host: {
      docker: host.docker,
      identity: host.identity,
      known_hosts: host.known_hosts,
      tls: host.tls,
      name: host.name,
      image: host.image ?? DEFAULT_TRAINER_IMAGE,
      env: host.env,
      deviceRequests: deviceRequests(host).DeviceRequests,
    },
    node: ctx.node.id,
    model: 'dir' in weights ? { dir: weights.dir } : { tiny: true, seed: weights.seed },
    loraRank: spec.lora_rank,
    // On a GPU host the worker takes the GPU; threads matter only where it runs on the host's CPUs.
    threads: opts.threads ?? (host.gpus ? undefined : 1),
    args: opts.args,
    log: (line) => ctx.log(`worker: ${line}`),
    signal: ctx.signal,
  });
  ctx.log(`trainer worker on host ${host.name}: ${worker.url}, serving ${worker.health.model ?? name}`);
  return {
    spec: asEndpoint(spec, worker),
    trainer: worker.client,
    worker,
    onHost: worker,
    ckptDir: worker.ckptDir,
    collect: (path, localDir) => worker.pull(path, localDir),
    stop: () => worker.stop(),
  };
}

/** The entry as the OpenAI-compatible endpoint a started worker serves it on, under the model name it reports. */
function asEndpoint(spec: ModelSpec, worker: { url: string; health: { model?: string | null } }): ModelSpec {
  return {
    ...spec,
    provider: 'openai',
    base_url: `${worker.url}/v1`,
    model: String(worker.health.model ?? spec.model),
  };
}
