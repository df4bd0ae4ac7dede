// `trainer: template`: the template policy, trained in this process. Its checkpoint is a small JSON file kept in
// each step's folder, so a rerun starts again from the last finished step's.
import { cp, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { templateUpdate } from '../../../agents/grpo/template-trainer.js';
import { freshCheckpoint, templatePolicy } from '../../../agents/policies/template/index.js';
import type { TemplateCheckpoint } from '../../../agents/policies/template/model.js';
import { InternalError } from '../../../core/errors.js';
import { readJson } from '../../../core/json-files.js';
import { templateSamples } from '../batch.js';
import type { GrpoRun, StepTrainer, Trainer } from './contract.js';

const CHECKPOINT = 'checkpoint.json';
const pad = (k: number) => String(k).padStart(5, '0');

export const templateTrainer = {
  defaultLr: 0.05,
  open: async (run) => openTemplate(run),
} satisfies Trainer;

function openTemplate({ ctx, p }: GrpoRun): StepTrainer {
  let ck: TemplateCheckpoint = freshCheckpoint();
  // Each finished step's folder, which holds the policy it saved.
  const dirs = new Map<number, string>();
  const reference = freshCheckpoint().weights;
  const save = (file: string) => writeFile(file, JSON.stringify(ck) + '\n');
  return {
    servesModel: false,
    policy: (k) =>
      templatePolicy('template', ck, { temperature: p.temperature, seed: `${p.seed}:${k}`, maxTurns: p.max_turns }),
    signal: () => ctx.signal,
    prepare: async () => {},
    policyWorker: async () => undefined,
    exact: () => undefined,
    async step(_k, batch, rollouts, lr, dir) {
      const next: TemplateCheckpoint = structuredClone(ck);
      const o = { lr, clipLow: p.clip.low, clipHigh: p.clip.high, kl: p.kl, epochs: p.epochs, reference };
      const update = { ...templateUpdate(next, templateSamples(batch, rollouts), o) };
      // The step's validation, which follows, samples from the updated policy.
      ck = next;
      await save(join(dir, CHECKPOINT));
      return update;
    },
    failure: async (_k, err) => err,
    recorded: async () => {},
    async finished(k, dir) {
      // The policy after this step, as it was saved (on resume, the last finished step's).
      ck = await readJson<TemplateCheckpoint>(join(dir, CHECKPOINT));
      dirs.set(k, dir);
      if (k % p.checkpoint_every === 0 || k === p.steps) {
        await mkdir(join(ctx.outDir, 'checkpoints'), { recursive: true });
        await cp(join(dir, CHECKPOINT), join(ctx.outDir, 'checkpoints', `step_${pad(k)}.json`));
      }
    },
    async publish(k) {
      const dir = dirs.get(k);
      if (!dir) throw new InternalError(`step ${k}, whose policy the node hands on, did not finish`);
      await cp(join(dir, CHECKPOINT), join(ctx.outDir, CHECKPOINT));
    },
    stop: async () => {},
  };
}
