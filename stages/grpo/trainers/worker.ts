// `trainer: worker`: the policy served and trained by a trainer worker (worker-trainer.ts). The worker is
// connected, or started, on the first step that has to run, so a rerun whose steps are all finished starts none.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { openaiPolicy } from '../../../agents/policies/openai.js';
import { InternalError } from '../../../core/errors.js';
import { readJson } from '../../../core/json-files.js';
import { CONTEXT_TOKENS } from '../index.js';
import {
  openWorkerTrainer,
  publishCheckpoint,
  type WorkerTrainer,
  type WorkerTrainerOptions,
} from '../worker-trainer.js';
import type { GrpoRun, StepTrainer, Trainer } from './contract.js';

export const workerTrainer = {
  defaultLr: 1e-6,
  open: async (run) => openWorker(run),
} satisfies Trainer;

function openWorker({ ctx, p }: GrpoRun): StepTrainer {
  const wo: WorkerTrainerOptions = {
    policy: p.policy,
    workerUrl: p.worker_url,
    checkpointEvery: p.checkpoint_every,
    keepCheckpoints: p.keep_checkpoints,
    steps: p.steps,
    gradientCheckpointing: p.gradient_checkpointing,
    planTokens: CONTEXT_TOKENS,
  };
  let worker: WorkerTrainer | undefined;
  // Each finished step's folder, whose update says where its checkpoint was saved.
  const dirs = new Map<number, string>();
  const open = async (resumeAfter: number) => (worker ??= await openWorkerTrainer(ctx, wo, resumeAfter));
  const opened = () => {
    if (!worker) throw new InternalError('the trainer worker was used before a step opened it');
    return worker;
  };
  return {
    servesModel: true,
    policy: (k) =>
      openaiPolicy(p.policy, opened().spec, {
        sampling: { temperature: p.temperature, seed: p.seed * 100_003 + k, logprobs: true },
        log: ctx.log,
      }),
    // A worker that died mid-step ends the step's rollouts at once (its failure then names the worker).
    signal: () => (worker ? AbortSignal.any([ctx.signal, worker.gone]) : ctx.signal),
    prepare: async (k) => void (await open(k - 1)),
    policyWorker: async () => (await open(0)).client,
    exact: () => ({
      tokenizer: opened().tokenizer,
      lossAggMode: p.loss_agg_mode,
      advantageLevel: p.advantage_level,
    }),
    async step(k, batch, _rollouts, _lr, dir) {
      const update = await opened().step(batch, k, ctx.signal);
      await writeFile(join(dir, 'update.json'), JSON.stringify(update) + '\n');
      return update;
    },
    failure: async (k, err) => (worker ? await worker.failure(k, err) : err),
    recorded: async (k, selected) => await worker?.recorded(k, selected),
    finished: async (k, dir) => void dirs.set(k, dir),
    async publish(k) {
      const dir = dirs.get(k);
      if (!dir) throw new InternalError(`step ${k}, whose checkpoint the node hands on, did not finish`);
      const update = await readJson<{ saved?: string }>(join(dir, 'update.json'));
      await publishCheckpoint(ctx, wo, { k, saved: update.saved });
    },
    stop: async () => await worker?.stop(),
  };
}
