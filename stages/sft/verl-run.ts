// `trainer: verl`: the examples exported for verl's multi-turn SFT trainer
// (gpu/verl/sft-export.ts), kept in the node's item store, run as a Ray job
// (stages/shared/verl-job.ts), and the last step's Hugging Face weights laid out as
// the node's checkpoint/ (model/, tokenizer/, the worker's manifest): what an
// eval serves through `provider: worker, checkpoint:` and what a grpo stage
// on verl loads as its policy.
import { cp, readFile, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { ParamError } from '../../core/errors.js';
import { formatJsonl } from '../../core/json-files.js';
import { sftCurve } from '../../gpu/verl/metrics.js';
import { collectVerlCheckpoint } from '../../gpu/verl/checkpoint.js';
import { writeSftExport } from '../../gpu/verl/sft-export.js';
import type { Metrics, StageContext } from '../contract.js';
import { checkCpuWeights, collectTensorboard, runVerlJob, trainingLayout, verlRunNames } from '../shared/verl-job.js';
import { verlWeightsOf } from '../shared/verl-weights.js';
import { CHECKPOINT_DIR } from '../shared/weights.js';
import type { Example } from './examples.js';
import type { SftParams } from './index.js';

export async function runSftVerl(
  ctx: StageContext<SftParams>,
  train: readonly Example[],
  val: readonly Example[],
): Promise<{ metrics: Metrics }> {
  const p = ctx.params;
  // verl's dataloader drops the last incomplete batch: fewer conversations than a batch train nothing.
  if (train.length < p.batch_size)
    throw new ParamError(
      ['batch_size'],
      `verl's SFT trainer drops an incomplete batch: ${train.length} training conversations make no batch of ${p.batch_size}`,
    );
  const stepsPerEpoch = Math.floor(train.length / p.batch_size);
  const weights = await verlWeightsOf(ctx as StageContext<unknown>, p.model, async () => train);
  checkCpuWeights(p.verl, weights.model);
  const cpu = p.verl.device === 'cpu';
  const o = {
    ...weights,
    epochs: p.epochs,
    lr: p.lr,
    schedule: p.schedule as 'constant' | 'cosine',
    warmup: p.warmup,
    maxLength: p.max_length,
    batchSize: p.batch_size,
    microBatchSize: p.micro_batch_size,
    maxGradNorm: p.max_grad_norm,
    gradientCheckpointing: p.gradient_checkpointing,
    seed: p.seed,
    ...trainingLayout(p.verl),
    gpuMemoryGib: p.verl.gpu_memory_gib,
    loggers: ctx.tracking?.logger,
    run: verlRunNames(ctx as StageContext<unknown>),
    // The SFT trainer starts no vLLM: the KV cache setting only rides along in the CPU environment.
    ...(cpu ? { cpu: { kvCacheGib: 1 } } : {}),
  };
  const exportDir =
    (await ctx.items.get('verl-sft-export')) ??
    (await ctx.items.put('verl-sft-export', async (d) => void (await writeSftExport(d, train, val, o))));
  const resultsDir =
    (await ctx.items.get('verl-sft-results')) ?? (await ctx.items.put('verl-sft-results', async () => {}));
  const job = await runVerlJob(ctx as StageContext<unknown>, { verl: p.verl, exportDir, resultsDir, launch: ['sft'] });
  await cp(exportDir, join(ctx.outDir, 'verl'), { recursive: true });
  await collectTensorboard(resultsDir, ctx.outDir);
  const { step } = await collectVerlCheckpoint(
    join(resultsDir, 'checkpoints'),
    join(ctx.outDir, CHECKPOINT_DIR),
    'sft',
  );
  ctx.log(`final weights (verl step ${step}): ${join(ctx.outDir, CHECKPOINT_DIR, 'model')}`);
  const raw = existsSync(join(resultsDir, 'metrics.jsonl'))
    ? await readFile(join(resultsDir, 'metrics.jsonl'), 'utf8')
    : '';
  const curve = sftCurve(raw, stepsPerEpoch);
  await writeFile(join(ctx.outDir, 'metrics.jsonl'), formatJsonl(curve));
  await writeFile(join(ctx.outDir, 'rows.json'), JSON.stringify({ curve }, null, 1) + '\n');
  await writeFile(join(ctx.outDir, 'job.json'), JSON.stringify(job) + '\n');
  const last = curve[curve.length - 1];
  const lastVal = [...curve].reverse().find((c) => c.val_loss !== null);
  return {
    metrics: {
      train_examples: train.length,
      val_examples: val.length,
      epochs: p.epochs,
      steps: step,
      tokens: curve.reduce((n, c) => n + (c.tokens ?? 0), 0),
      train_loss: last?.train_loss ?? null,
      val_loss: lastVal?.val_loss ?? null,
    },
  };
}
