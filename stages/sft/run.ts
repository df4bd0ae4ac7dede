// The sft stage's run (stages/sft/index.ts has its parameters and checks):
// examples read, filtered, deduplicated and split, written as TRL's
// conversational JSONL, then trained on a trainer worker epoch by epoch, the
// final weights saved into the node's checkpoint/ (or on verl: verl-run.ts).
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { ParamError } from '../../core/errors.js';
import { Rng } from '../../core/random.js';
import type { SftExample, TokenizerIdentity, TrainerClient } from '../../gpu/trainer/client.js';
import type { Metrics, StageContext } from '../contract.js';
import { CHECKPOINT_DIR, serveModel } from '../shared/worker.js';
import { trajectoryFiles } from '../../agents/trajectory-files.js';
import { applyFilters, readChatJsonl, splitExamples, trajectoryExamples, type Example } from './data.js';
import { dedup } from './dedup.js';
import { modelIssues, type SftParams } from './index.js';
import { learningRate, warmupSteps } from '../shared/schedule.js';
import { openTrainLog } from '../shared/train-log.js';

/** The examples of the node, with the counts of what was read and left out. */
async function loadExamples(ctx: StageContext<SftParams>): Promise<{ examples: Example[]; skipped: number }> {
  const p = ctx.params;
  if (p.data) {
    const { examples, problems } = readChatJsonl(resolve(ctx.experimentDir, p.data), p.data);
    if (problems.length) throw new ParamError(['data'], problems.join('\n'));
    return { examples, skipped: 0 };
  }
  const out: Example[] = [];
  let skipped = 0;
  for (const input of ctx.inputs) {
    for (const { file } of trajectoryFiles(input.dir)) {
      const r = trajectoryExamples(file, `${input.id}/${file.slice(input.dir.length + 1)}`);
      out.push(...r.examples);
      skipped += r.skipped;
    }
  }
  return { examples: out, skipped };
}

const jsonl = (xs: readonly Example[]) =>
  xs.map((e) => JSON.stringify({ messages: e.messages })).join('\n') + (xs.length ? '\n' : '');
const asRequest = (xs: readonly Example[]): SftExample[] => xs.map((e) => ({ messages: e.messages }));

/** The mean NLL per assistant token over `xs`, asked batch_size conversations at a time (long requests time out). */
async function validationLoss(
  trainer: TrainerClient,
  xs: readonly Example[],
  p: SftParams,
  tokenizer: TokenizerIdentity | undefined,
  signal: AbortSignal,
): Promise<number | null> {
  let nll = 0;
  let tokens = 0;
  for (let i = 0; i < xs.length; i += p.batch_size) {
    const r = await trainer.evalLoss(
      asRequest(xs.slice(i, i + p.batch_size)),
      { max_length: p.max_length, micro_batch_size: p.micro_batch_size, tokenizer },
      signal,
    );
    if (r.loss !== null) nll += r.loss * r.loss_tokens;
    tokens += r.loss_tokens;
  }
  return tokens ? nll / tokens : null;
}

/** The worker's memory check plans for the longest example the node sends (max_length) and its micro-batch. */
const memoryPlan = (p: SftParams) => [
  '--check-memory',
  '--plan-tokens',
  String(p.max_length),
  '--plan-micro-batch',
  String(p.micro_batch_size),
];
const round = (x: number | null | undefined, d = 5) => (x === null || x === undefined ? null : Number(x.toFixed(d)));

export async function run(ctx: StageContext<SftParams>) {
  const p = ctx.params;
  for (const issue of modelIssues(p, ctx.models)) throw new ParamError(issue.param, issue.message);
  const read = await loadExamples(ctx);
  const filtered = applyFilters(read.examples, p.filter);
  const unique = p.dedup ? dedup(filtered.kept, p.dedup_threshold) : { kept: filtered.kept, removed: 0 };
  const { train, val } = splitExamples(unique.kept, p.val_fraction, p.seed);
  const funnel = {
    read: read.examples.length,
    skipped: read.skipped,
    filtered_out: filtered.dropped,
    duplicates: unique.removed,
    train: train.length,
    val: val.length,
  };
  ctx.log(`examples: ${JSON.stringify(funnel)}`);
  await mkdir(join(ctx.outDir, 'dataset'), { recursive: true });
  await writeFile(join(ctx.outDir, 'dataset', 'train.jsonl'), jsonl(train));
  await writeFile(join(ctx.outDir, 'dataset', 'val.jsonl'), jsonl(val));
  await writeFile(join(ctx.outDir, 'dataset', 'funnel.json'), JSON.stringify(funnel, null, 1) + '\n');
  if (!train.length)
    throw new Error(`no training examples are left (${JSON.stringify(funnel)}): loosen filter: or give more data`);
  if (p.trainer === 'verl') {
    const r = await (await import('./verl-run.js')).runSftVerl(ctx, train, val);
    return { metrics: { examples: funnel.read, duplicates: funnel.duplicates, ...r.metrics } };
  }

  const stepsPerEpoch = Math.ceil(train.length / p.batch_size);
  const total = stepsPerEpoch * p.epochs;
  const warm = warmupSteps(p.warmup, total);
  // Opened before the worker starts: a W&B run asked for and impossible stops the node before anything is spent.
  const trainLog = await openTrainLog(ctx, { config: p });
  // The worker saves the final weights straight into the node's checkpoint/ (written aside and renamed into place).
  const served = await serveModel(ctx, p.model, {
    ckptDir: ctx.outDir,
    threads: p.threads,
    args: [...(p.gradient_checkpointing ? ['--gradient-checkpointing'] : []), ...memoryPlan(p)],
  }).catch(async (err: unknown) => {
    await trainLog.close();
    throw err;
  });
  try {
    const trainer = served.trainer!;
    const h = served.worker?.health ?? (await trainer.health(ctx.signal));
    const tokenizer =
      h.tokenizer_sha256 && h.chat_template_sha256
        ? { tokenizer_sha256: h.tokenizer_sha256, chat_template_sha256: h.chat_template_sha256 }
        : undefined;
    const opts = { max_length: p.max_length, micro_batch_size: p.micro_batch_size, tokenizer };
    const before = await validationLoss(trainer, val, p, tokenizer, ctx.signal);
    const curve: Array<Record<string, number | null>> = [
      { epoch: 0, step: 0, train_loss: null, val_loss: round(before), tokens: 0, lr: null },
    ];
    trainLog.write(curve[0]);
    ctx.log(`epoch 0: val loss ${curve[0].val_loss ?? '-'}`);
    const rng = new Rng('sft-order', p.seed);
    let step = 0;
    let tokens = 0;
    let truncated = 0;
    let truncatedTokens = 0;
    for (let epoch = 1; epoch <= p.epochs; epoch++) {
      const order = rng.shuffle(train);
      let nll = 0;
      let lossTokens = 0;
      let epochTokens = 0;
      let lr = p.lr;
      for (let i = 0; i < order.length; i += p.batch_size) {
        if (ctx.signal.aborted) throw new Error('interrupted');
        lr = learningRate(step, total, p.lr, p.schedule, warm);
        const r = await trainer.sft(
          asRequest(order.slice(i, i + p.batch_size)),
          { ...opts, lr, max_grad_norm: p.max_grad_norm },
          ctx.signal,
        );
        if (r.loss !== null) nll += r.loss * r.loss_tokens;
        lossTokens += r.loss_tokens;
        epochTokens += r.tokens;
        if (epoch === 1) {
          truncated += r.truncated;
          truncatedTokens += r.truncated_tokens;
        }
        ctx.progress(++step, total);
      }
      tokens += epochTokens;
      const after = await validationLoss(trainer, val, p, tokenizer, ctx.signal);
      curve.push({
        epoch,
        step,
        train_loss: round(lossTokens ? nll / lossTokens : null),
        val_loss: round(after),
        tokens: epochTokens,
        loss_tokens: lossTokens,
        lr,
      });
      trainLog.write(curve[epoch]);
      ctx.log(
        `epoch ${epoch}/${p.epochs}: train loss ${curve[epoch].train_loss}, val loss ${curve[epoch].val_loss ?? '-'}, ${epochTokens} tokens`,
      );
    }
    if (truncated)
      ctx.log(
        `${truncated} training conversations were longer than max_length ${p.max_length}: ${truncatedTokens} tokens cut off their ends`,
      );
    const saved = await trainer.save(step, CHECKPOINT_DIR, ctx.signal);
    // A worker on a host saved it in its container: it comes back into the node's output before the node is done.
    await served.collect(saved.path, join(ctx.outDir, CHECKPOINT_DIR));
    // Serving needs only the weights; the optimiser's state would double the entry (a fine-tune starting here begins a fresh one).
    await rm(join(ctx.outDir, CHECKPOINT_DIR, 'optimizer.pt'), { force: true });
    ctx.log(`final weights: ${saved.path}`);
    await writeFile(join(ctx.outDir, 'metrics.jsonl'), curve.map((c) => JSON.stringify(c)).join('\n') + '\n');
    await writeFile(join(ctx.outDir, 'rows.json'), JSON.stringify({ curve }, null, 1) + '\n');
    const last = curve[curve.length - 1];
    const metrics: Metrics = {
      examples: funnel.read,
      duplicates: funnel.duplicates,
      train_examples: train.length,
      val_examples: val.length,
      epochs: p.epochs,
      steps: step,
      tokens,
      truncated,
      train_loss: last.train_loss,
      val_loss_before: curve[0].val_loss,
      val_loss: last.val_loss,
    };
    return { metrics };
  } finally {
    await Promise.all([served.stop(), trainLog.close()]);
  }
}
