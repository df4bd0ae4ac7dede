// `uses: sft`: supervised fine-tuning of a worker model on agent trajectories
// (or any chat JSONL), with the loss on the assistant's tokens only. The
// examples are filtered, near-duplicates removed and a seeded validation
// split held out; dataset/train.jsonl and dataset/val.jsonl are written as
// conversational JSONL that TRL reads as it is. Training runs on a trainer
// worker started for the node (stages/worker.ts): one POST /sft per optimiser
// step, the validation loss (POST /eval_loss) before training and after each
// epoch, and the final weights saved by the worker straight into the node's
// checkpoint/, which a `provider: worker, checkpoint: <this stage>` model serves.
// An interrupted run starts over: its staging folder is thrown away whole.
import { existsSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { assetPath } from '../../core/assets.js';
import { ParamError } from '../../core/errors.js';
import { listFiles } from '../../core/fs.js';
import { canonicalJson, hashFile, sha256 } from '../../core/hash.js';
import { modelIdentity } from '../../core/models.js';
import { Rng } from '../../core/random.js';
import type { SftExample, TokenizerIdentity, TrainerClient } from '../../gpu/trainer/client.js';
import schema from '../../schemas/stages/sft.schema.json';
import type { Metrics, ParamIssue, Stage, StageContext } from '../contract.js';
import { CHECKPOINT_DIR, serveModel } from '../worker.js';
import { applyFilters, readChatJsonl, readTrajectories, splitExamples, trajectoryFiles, type Example, type Filters } from './data.js';
import { dedup } from './dedup.js';
import { learningRate, warmupSteps, type Schedule } from './schedule.js';

export interface SftParams {
  model: string;
  data?: string;
  filter: Filters;
  dedup: boolean;
  dedup_threshold: number;
  val_fraction: number;
  seed: number;
  epochs: number;
  lr: number;
  schedule: Schedule;
  warmup: number;
  max_length: number;
  batch_size: number;
  micro_batch_size: number;
  max_grad_norm: number;
  threads: number;
  gradient_checkpointing: boolean;
}

function modelIssues(p: SftParams, models: StageContext<SftParams>['models']): ParamIssue[] {
  const m = models[p.model];
  // An undefined name is reported by the reference check.
  if (m && m.provider !== 'worker') return [{ param: ['model'], message: `sft trains the weights a trainer worker holds: ${p.model} must be a models: entry with provider: worker (it is ${m.provider})` }];
  return [];
}

function dataIssues(p: SftParams, experimentDir: string): ParamIssue[] {
  if (!p.data) return [];
  const file = resolve(experimentDir, p.data);
  if (!existsSync(file)) return [{ param: ['data'], message: `${p.data}: no such file` }];
  const { examples, problems } = readChatJsonl(file, p.data);
  if (problems.length) return problems.map((message) => ({ param: ['data'], message }));
  if (!examples.length) return [{ param: ['data'], message: `${p.data}: holds no conversation` }];
  return [];
}

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
    for (const file of trajectoryFiles(input.dir)) {
      const r = readTrajectories(file, `${input.id}/${file.slice(input.dir.length + 1)}`);
      out.push(...r.examples);
      skipped += r.skipped;
    }
  }
  return { examples: out, skipped };
}

const jsonl = (xs: readonly Example[]) => xs.map((e) => JSON.stringify({ messages: e.messages })).join('\n') + (xs.length ? '\n' : '');
const asRequest = (xs: readonly Example[]): SftExample[] => xs.map((e) => ({ messages: e.messages }));

/** The mean NLL per assistant token over `xs`, asked batch_size conversations at a time (long requests time out). */
async function validationLoss(trainer: TrainerClient, xs: readonly Example[], p: SftParams, tokenizer: TokenizerIdentity | undefined, signal: AbortSignal): Promise<number | null> {
  let nll = 0;
  let tokens = 0;
  for (let i = 0; i < xs.length; i += p.batch_size) {
    const r = await trainer.evalLoss(asRequest(xs.slice(i, i + p.batch_size)), { max_length: p.max_length, micro_batch_size: p.micro_batch_size, tokenizer }, signal);
    if (r.loss !== null) nll += r.loss * r.loss_tokens;
    tokens += r.loss_tokens;
  }
  return tokens ? nll / tokens : null;
}

const round = (x: number | null | undefined, d = 5) => (x === null || x === undefined ? null : Number(x.toFixed(d)));

export const sft: Stage<SftParams> = {
  kind: 'sft',
  version: 1,
  description: 'Supervised fine-tuning of a worker model on agent trajectories or chat conversations (assistant-only loss).',
  schema,
  keyIgnore: ['threads'],
  breakdowns: ['curve'],
  flow: {
    // Its checkpoint/ is served through a models: entry, not read as a template policy (the `policy` artifact).
    gives: ['files'],
    takes: (p) => (p.data ? [] : ['trajectories']),
  },

  check(p, ctx) {
    return [...modelIssues(p, ctx.models), ...dataIssues(p, ctx.experimentDir)];
  },

  async keyExtras(p, ctx) {
    const spec = ctx.models[p.model];
    // The worker's code and its pinned packages decide the weights it writes.
    const code = await listFiles(assetPath('gpu/worker/mlepipe_worker'), (rel) => rel.includes('__pycache__'));
    return {
      model: spec ? modelIdentity(spec) : null,
      data: p.data ? await hashFile(resolve(ctx.experimentDir, p.data)) : null,
      worker: sha256(canonicalJson(code)),
      lock: await hashFile(assetPath('gpu/worker/requirements.lock')),
    };
  },

  async run(ctx) {
    const p = ctx.params;
    for (const issue of modelIssues(p, ctx.models)) throw new ParamError(issue.param, issue.message);
    const read = await loadExamples(ctx);
    const filtered = applyFilters(read.examples, p.filter);
    const unique = p.dedup ? dedup(filtered.kept, p.dedup_threshold) : { kept: filtered.kept, removed: 0 };
    const { train, val } = splitExamples(unique.kept, p.val_fraction, p.seed);
    const funnel = { read: read.examples.length, skipped: read.skipped, filtered_out: filtered.dropped, duplicates: unique.removed, train: train.length, val: val.length };
    ctx.log(`examples: ${JSON.stringify(funnel)}`);
    await mkdir(join(ctx.outDir, 'dataset'), { recursive: true });
    await writeFile(join(ctx.outDir, 'dataset', 'train.jsonl'), jsonl(train));
    await writeFile(join(ctx.outDir, 'dataset', 'val.jsonl'), jsonl(val));
    await writeFile(join(ctx.outDir, 'dataset', 'funnel.json'), JSON.stringify(funnel, null, 1) + '\n');
    if (!train.length) throw new Error(`no training examples are left (${JSON.stringify(funnel)}): loosen filter: or give more data`);

    const stepsPerEpoch = Math.ceil(train.length / p.batch_size);
    const total = stepsPerEpoch * p.epochs;
    const warm = warmupSteps(p.warmup, total);
    // The worker saves the final weights straight into the node's checkpoint/ (written aside and renamed into place).
    const served = await serveModel(ctx, p.model, { ckptDir: ctx.outDir, threads: p.threads, args: p.gradient_checkpointing ? ['--gradient-checkpointing'] : [] });
    try {
      const trainer = served.trainer!;
      const h = served.worker?.health ?? (await trainer.health(ctx.signal));
      const tokenizer = h.tokenizer_sha256 && h.chat_template_sha256 ? { tokenizer_sha256: h.tokenizer_sha256, chat_template_sha256: h.chat_template_sha256 } : undefined;
      const opts = { max_length: p.max_length, micro_batch_size: p.micro_batch_size, tokenizer };
      const before = await validationLoss(trainer, val, p, tokenizer, ctx.signal);
      const curve: Array<Record<string, number | null>> = [{ epoch: 0, step: 0, train_loss: null, val_loss: round(before), tokens: 0, lr: null }];
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
          const r = await trainer.sft(asRequest(order.slice(i, i + p.batch_size)), { ...opts, lr, max_grad_norm: p.max_grad_norm }, ctx.signal);
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
        curve.push({ epoch, step, train_loss: round(lossTokens ? nll / lossTokens : null), val_loss: round(after), tokens: epochTokens, loss_tokens: lossTokens, lr });
        ctx.log(`epoch ${epoch}/${p.epochs}: train loss ${curve[epoch].train_loss}, val loss ${curve[epoch].val_loss ?? '-'}, ${epochTokens} tokens`);
      }
      if (truncated) ctx.log(`${truncated} training conversations were longer than max_length ${p.max_length}: ${truncatedTokens} tokens cut off their ends`);
      const saved = await trainer.save(step, CHECKPOINT_DIR, ctx.signal);
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
      await served.stop();
    }
  },
};
