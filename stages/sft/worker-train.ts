// `trainer: worker`: the sft node's examples trained on a trainer worker epoch by epoch, the validation loss
// measured before the first epoch and after each, and the final weights saved into the node's checkpoint/.
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { formatJsonl } from '../../core/json-files.js';
import { Rng } from '../../core/random.js';
import type { SftExample, TokenizerIdentity, TrainerClient } from '../../gpu/trainer/client.js';
import type { Metrics, StageContext } from '../contract.js';
import { learningRate, warmupSteps } from '../shared/schedule.js';
import { openTrainLog } from '../shared/train-log.js';
import { serveModel } from '../shared/worker.js';
import { CHECKPOINT_DIR } from '../shared/weights.js';
import type { Example } from './examples.js';
import type { SftParams } from './index.js';

type CurvePoint = Record<string, number | null>;

/** What every request of one training run shares. */
interface Session {
  ctx: StageContext<SftParams>;
  trainer: TrainerClient;
  tokenizer: TokenizerIdentity | undefined;
}

/** Where the run stands across epochs. */
interface Progress {
  step: number;
  total: number;
  warm: number;
  truncated: number;
  truncatedTokens: number;
}

const asRequest = (xs: readonly Example[]): SftExample[] => xs.map((e) => ({ messages: e.messages }));
const round = (x: number | null | undefined, d = 5) => (x === null || x === undefined ? null : Number(x.toFixed(d)));

/** The worker's memory check plans for the longest example the node sends (max_length) and its micro-batch. */
const memoryPlan = (p: SftParams) => [
  '--check-memory',
  '--plan-tokens',
  String(p.max_length),
  '--plan-micro-batch',
  String(p.micro_batch_size),
];

const requestOptions = (s: Session) => ({
  max_length: s.ctx.params.max_length,
  micro_batch_size: s.ctx.params.micro_batch_size,
  tokenizer: s.tokenizer,
});

/** The mean NLL per assistant token over `xs`, asked batch_size conversations at a time (long requests time out). */
async function validationLoss(s: Session, xs: readonly Example[]): Promise<number | null> {
  const p = s.ctx.params;
  let nll = 0;
  let tokens = 0;
  for (let i = 0; i < xs.length; i += p.batch_size) {
    const r = await s.trainer.evalLoss(asRequest(xs.slice(i, i + p.batch_size)), requestOptions(s), s.ctx.signal);
    if (r.loss !== null) nll += r.loss * r.loss_tokens;
    tokens += r.loss_tokens;
  }
  return tokens ? nll / tokens : null;
}

/** One pass over `order`, batch by batch; what it trained on (truncation is counted in the first epoch only). */
async function trainEpoch(s: Session, order: readonly Example[], at: Progress, first: boolean) {
  const { ctx } = s;
  const p = ctx.params;
  let nll = 0;
  let lossTokens = 0;
  let epochTokens = 0;
  let lr = p.lr;
  for (let i = 0; i < order.length; i += p.batch_size) {
    ctx.signal.throwIfAborted();
    lr = learningRate(at.step, at.total, p.lr, p.schedule, at.warm);
    const r = await s.trainer.sft(
      asRequest(order.slice(i, i + p.batch_size)),
      { ...requestOptions(s), lr, max_grad_norm: p.max_grad_norm },
      ctx.signal,
    );
    if (r.loss !== null) nll += r.loss * r.loss_tokens;
    lossTokens += r.loss_tokens;
    epochTokens += r.tokens;
    if (first) {
      at.truncated += r.truncated;
      at.truncatedTokens += r.truncated_tokens;
    }
    ctx.progress({ done: ++at.step, total: at.total, unit: 'steps' });
  }
  return { train_loss: round(lossTokens ? nll / lossTokens : null), tokens: epochTokens, loss_tokens: lossTokens, lr };
}

/** Every epoch in a seeded order, with the validation loss before the first and after each: the curve. */
async function trainEpochs(
  s: Session,
  train: readonly Example[],
  val: readonly Example[],
  log: (c: CurvePoint) => void,
) {
  const { ctx } = s;
  const p = ctx.params;
  const total = Math.ceil(train.length / p.batch_size) * p.epochs;
  const at: Progress = { step: 0, total, warm: warmupSteps(p.warmup, total), truncated: 0, truncatedTokens: 0 };
  const before = await validationLoss(s, val);
  const curve: CurvePoint[] = [{ epoch: 0, step: 0, train_loss: null, val_loss: round(before), tokens: 0, lr: null }];
  log(curve[0]);
  ctx.log(`epoch 0: val loss ${curve[0].val_loss ?? '-'}`);
  const rng = new Rng('sft-order', p.seed);
  let tokens = 0;
  for (let epoch = 1; epoch <= p.epochs; epoch++) {
    const e = await trainEpoch(s, rng.shuffle(train), at, epoch === 1);
    tokens += e.tokens;
    const after = await validationLoss(s, val);
    const { train_loss, loss_tokens, lr } = e;
    curve.push({ epoch, step: at.step, train_loss, val_loss: round(after), tokens: e.tokens, loss_tokens, lr });
    log(curve[epoch]);
    ctx.log(
      `epoch ${epoch}/${p.epochs}: train loss ${curve[epoch].train_loss}, val loss ${curve[epoch].val_loss ?? '-'}, ${e.tokens} tokens`,
    );
  }
  if (at.truncated)
    ctx.log(
      `${at.truncated} training conversations were longer than max_length ${p.max_length}: ${at.truncatedTokens} tokens cut off their ends`,
    );
  return { curve, steps: at.step, tokens, truncated: at.truncated };
}

/** Trains on a worker started for the node; the metrics of the run. */
export async function trainOnWorker(
  ctx: StageContext<SftParams>,
  train: readonly Example[],
  val: readonly Example[],
): Promise<Metrics> {
  const p = ctx.params;
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
    const r = await trainEpochs({ ctx, trainer, tokenizer }, train, val, (c) => trainLog.write(c));
    const saved = await trainer.save(r.steps, CHECKPOINT_DIR, ctx.signal);
    // A worker on a host saved it in its container: it comes back into the node's output before the node is done.
    await served.collect(saved.path, join(ctx.outDir, CHECKPOINT_DIR));
    // Serving needs only the weights; the optimiser's state would double the entry (a fine-tune starting here begins a fresh one).
    await rm(join(ctx.outDir, CHECKPOINT_DIR, 'optimizer.pt'), { force: true });
    ctx.log(`final weights: ${saved.path}`);
    await writeFile(join(ctx.outDir, 'metrics.jsonl'), formatJsonl(r.curve));
    await writeFile(join(ctx.outDir, 'rows.json'), JSON.stringify({ curve: r.curve }, null, 1) + '\n');
    const last = r.curve[r.curve.length - 1];
    return {
      train_examples: train.length,
      val_examples: val.length,
      epochs: p.epochs,
      steps: r.steps,
      tokens: r.tokens,
      truncated: r.truncated,
      train_loss: last.train_loss,
      val_loss_before: r.curve[0].val_loss,
      val_loss: last.val_loss,
    };
  } finally {
    await Promise.all([served.stop(), trainLog.close()]);
  }
}
