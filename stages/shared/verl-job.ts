// What the stages that train on verl share (grpo and sft with trainer: verl), besides the weights
// (verl-weights.ts): a verl export run as a Ray job on the stage's cluster (ray_address, the run's
// ray.address, else a head started on this machine for the run), its record kept in the node's item store
// so that a rerun reattaches to the job instead of submitting another.
import { existsSync } from 'node:fs';
import { cp, rm, symlink, writeFile } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { join, resolve } from 'node:path';
import { ParamError } from '../../core/errors.js';
import { readJsonFile } from '../../core/text.js';
import { CPU_RUN_RAY_CPUS, readModelShape, vllmCpuProblem } from '../../gpu/verl/cpu.js';
import { readExportRun } from '../../gpu/verl/export-files.js';
import { localPython, runJob, startLocalHead, withOverrides, type JobRecord } from '../../gpu/verl/job.js';
import { type RunNames, verlRunOverrides } from '../../gpu/verl/overrides.js';
import type { StageContext } from '../contract.js';
import { runName, TENSORBOARD_DIR } from './train-log.js';

/** The verl: keys every stage that trains on verl has. */
export interface VerlCluster {
  ray_address?: string;
  python?: string;
  device: 'cuda' | 'cpu';
  stall_timeout_s?: number;
}

/** The nodes and GPUs a job trains on: a CPU run trains on one worker, whatever the cluster keys say. */
export function trainingLayout(v: VerlCluster & { nodes: number; gpus_per_node: number }): {
  nodes: number;
  gpusPerNode: number;
} {
  return v.device === 'cpu' ? { nodes: 1, gpusPerNode: 1 } : { nodes: v.nodes, gpusPerNode: v.gpus_per_node };
}

/** How long a job may print nothing: the stage's, else 10 minutes on a CPU and no bound on GPUs. */
export const stallSeconds = (v: VerlCluster): number => v.stall_timeout_s ?? (v.device === 'cpu' ? 600 : 0);

/**
 * A CPU run's weights must be ones vLLM's CPU build serves: refused before a Ray head starts, at the stage's
 * verl.device (the config check refuses a path: model of that shape earlier; a checkpoint is read here).
 */
export function checkCpuWeights(v: VerlCluster, model: string): void {
  if (v.device !== 'cpu') return;
  const shape = readModelShape(model);
  const why = shape && vllmCpuProblem(shape);
  if (why) throw new ParamError(['verl', 'device'], `${model}: ${why}`);
}

/**
 * The node's run on W&B, as the local trainers name theirs: EXPERIMENT/NODE[@variant] in the experiment's project
 * (WANDB_PROJECT, where this process has it, names another, as it does for them).
 */
export function verlRunNames(ctx: Pick<StageContext<unknown>, 'node' | 'tracking'>): RunNames {
  return { project: process.env.WANDB_PROJECT || (ctx.tracking?.experiment ?? 'mlepipe'), name: runName(ctx) };
}

/**
 * The export's overrides with the run named by this node: an export kept from an earlier attempt, or written by a
 * node of the same key in another experiment (names are not part of a key), may carry other names.
 */
export const jobOverrides = (ctx: Pick<StageContext<unknown>, 'node' | 'tracking'>, overrides: readonly string[]) =>
  withOverrides(overrides, verlRunOverrides(verlRunNames(ctx)));

export interface Service {
  url: string;
  token: string;
  close(): Promise<void>;
}

export interface VerlJobOptions {
  verl: VerlCluster;
  exportDir: string;
  resultsDir: string;
  launch?: readonly string[];
  /** A service the job's workers reach (the sandbox, for GRPO), started once the cluster is known and closed with the job. */
  service?: () => Promise<Service>;
}

export async function runVerlJob(
  ctx: StageContext<unknown>,
  o: VerlJobOptions,
): Promise<{ id: string; reattached: boolean }> {
  // A head started for the run goes with it: a rerun starts another, and submits to it afresh.
  const cluster = o.verl.ray_address ?? ctx.ray?.address;
  // Every core: verl's TransferQueue and GPU workers hold a dozen CPUs on one GPU, and wait forever without them.
  // A CPU run's head declares one logical GPU (verl's pools ask Ray for GPU bundles) and CPUs for the processes it places.
  const cpu = o.verl.device === 'cpu';
  const head = cluster
    ? undefined
    : await startLocalHead({
        cpus: cpu ? Math.max(CPU_RUN_RAY_CPUS, availableParallelism()) : availableParallelism(),
        gpus: cpu ? 1 : undefined,
        log: ctx.log,
      });
  let service: Service | undefined;
  try {
    const run = await readExportRun(o.exportDir);
    const address = cluster ?? head!.address;
    // The job is recorded per cluster: the item store keeps the first record of an id.
    const jobId = `ray-job ${address}`;
    const jobItem = await ctx.items.get(jobId);
    const recorded = jobItem ? ((await readJsonFile(join(jobItem, 'job.json'))) as JobRecord) : undefined;
    service = await o.service?.();
    await watchTensorboard(o.resultsDir, ctx.outDir);
    return await runJob({
      exportDir: o.exportDir,
      resultsDir: o.resultsDir,
      address,
      overrides: jobOverrides(ctx, run.overrides),
      env: run.env,
      stallS: stallSeconds(o.verl),
      auth: head ? { token: head.token } : {},
      launch: o.launch,
      // A head started here runs Ray from .venv/verl; its workers' Python is that one, which has verl.
      python: o.verl.python ?? (head ? localPython() : 'python3'),
      sandboxUrl: service?.url,
      sandboxToken: service?.token,
      recorded,
      record: async (j) =>
        void (await ctx.items.put(jobId, (d) => writeFile(join(d, 'job.json'), JSON.stringify(j) + '\n'))),
      log: ctx.log,
      signal: ctx.signal,
    });
  } finally {
    await service?.close();
    await head?.stop();
  }
}

/**
 * While the job runs, the node's tensorboard/ is a link to the job's TENSORBOARD_DIR (under its results, which
 * verl writes as it trains), so the named link `<cache>/tensorboard/EXPERIMENT/NODE` shows the curves live.
 */
export async function watchTensorboard(resultsDir: string, outDir: string): Promise<void> {
  await rm(join(outDir, TENSORBOARD_DIR), { force: true, recursive: true });
  await symlink(resolve(resultsDir, TENSORBOARD_DIR), join(outDir, TENSORBOARD_DIR));
}

/** verl's TensorBoard files (the job's TENSORBOARD_DIR) copied into the node's tensorboard/ in place of the link, where the local trainers write theirs. */
export async function collectTensorboard(resultsDir: string, outDir: string): Promise<void> {
  await rm(join(outDir, TENSORBOARD_DIR), { force: true, recursive: true });
  if (existsSync(join(resultsDir, TENSORBOARD_DIR)))
    await cp(join(resultsDir, TENSORBOARD_DIR), join(outDir, TENSORBOARD_DIR), { recursive: true });
}
