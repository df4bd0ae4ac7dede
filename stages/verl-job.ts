// What the stages that train on verl share (grpo and sft with trainer: verl):
// the weights verl loads for a models: entry, and a verl export run as a Ray
// job on the stage's cluster (ray_address, the run's ray.address, else a head
// started on this machine for the run), its record kept in the node's item
// store so that a rerun reattaches to the job instead of submitting another.
import { existsSync } from 'node:fs';
import { cp, writeFile } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { UserError } from '../core/errors.js';
import { readJsonFile } from '../core/text.js';
import { localPython, runJob, startLocalHead, type JobRecord } from '../gpu/verl/job.js';
import { verlModelPath } from '../gpu/verl/overrides.js';
import type { StageContext } from './contract.js';
import { CHECKPOINT_DIR, weightsFor } from './worker.js';

/**
 * What verl loads for a models: entry: its path:, or the full-weight checkpoint an upstream sft or grpo
 * node saved (its model/ and tokenizer/ folders; the config check refuses a LoRA one).
 */
export function verlWeightsOf(ctx: StageContext<unknown>, name: string): { model: string; tokenizer?: string } {
  const m = ctx.models[name];
  if (m.provider !== 'worker' || m.checkpoint === undefined) return { model: verlModelPath(m, ctx.experimentDir) };
  const w = weightsFor(ctx, name, m) as { dir: string };
  if (!existsSync(join(w.dir, 'model', 'config.json'))) throw new UserError(`model ${name}: ${m.checkpoint}'s ${CHECKPOINT_DIR}/ holds no full weights (model/config.json): verl loads a model folder, not an adapter`);
  return { model: join(w.dir, 'model'), tokenizer: join(w.dir, 'tokenizer') };
}

export interface Service {
  url: string;
  token: string;
  close(): Promise<void>;
}

export interface VerlJobOptions {
  verl: { ray_address?: string; python?: string };
  exportDir: string;
  resultsDir: string;
  overrides: readonly string[];
  launch?: readonly string[];
  /** A service the job's workers reach (the sandbox, for GRPO), started once the cluster is known and closed with the job. */
  service?: () => Promise<Service>;
}

export async function runVerlJob(ctx: StageContext<unknown>, o: VerlJobOptions): Promise<{ id: string; reattached: boolean }> {
  // A head started for the run goes with it: a rerun starts another, and submits to it afresh.
  const cluster = o.verl.ray_address ?? ctx.ray?.address;
  // Every core: verl's TransferQueue and GPU workers hold a dozen CPUs on one GPU, and wait forever without them.
  const head = cluster ? undefined : await startLocalHead({ cpus: availableParallelism(), log: ctx.log });
  let service: Service | undefined;
  try {
    const address = cluster ?? head!.address;
    // The job is recorded per cluster: the item store keeps the first record of an id.
    const jobId = `ray-job ${address}`;
    const jobItem = await ctx.items.get(jobId);
    const recorded = jobItem ? ((await readJsonFile(join(jobItem, 'job.json'))) as JobRecord) : undefined;
    service = await o.service?.();
    return await runJob({
      exportDir: o.exportDir,
      resultsDir: o.resultsDir,
      address,
      overrides: o.overrides,
      launch: o.launch,
      // A head started here runs Ray from .venv/verl; its workers' Python is that one, which has verl.
      python: o.verl.python ?? (head ? localPython() : 'python3'),
      sandboxUrl: service?.url,
      sandboxToken: service?.token,
      recorded,
      record: async (j) => void (await ctx.items.put(jobId, (d) => writeFile(join(d, 'job.json'), JSON.stringify(j) + '\n'))),
      log: ctx.log,
      signal: ctx.signal,
    });
  } finally {
    await service?.close();
    await head?.stop();
  }
}

/** verl's TensorBoard files (the job's TENSORBOARD_DIR, under its results) into the node's tensorboard/, where the local trainers write theirs. */
export async function collectTensorboard(resultsDir: string, outDir: string): Promise<void> {
  if (existsSync(join(resultsDir, 'tensorboard'))) await cp(join(resultsDir, 'tensorboard'), join(outDir, 'tensorboard'), { recursive: true });
}
