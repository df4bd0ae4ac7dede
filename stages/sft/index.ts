// `uses: sft`: supervised fine-tuning of a worker model on agent trajectories
// (or any chat JSONL), with the loss on the assistant's tokens only. The
// examples are filtered, near-duplicates removed and a seeded validation
// split held out; dataset/train.jsonl and dataset/val.jsonl are written as
// conversational JSONL that TRL reads as it is. Training runs on a trainer
// worker started for the node (stages/shared/worker.ts): one POST /sft per optimiser
// step, the validation loss (POST /eval_loss) before training and after each
// epoch, and the final weights saved by the worker straight into the node's
// checkpoint/, which a `provider: worker, checkpoint: <this stage>` model serves.
// An interrupted run starts over: its staging folder is thrown away whole.
// With trainer: verl the same examples train on verl's multi-turn SFT trainer
// as a Ray job instead (verl-run.ts), for full fine-tuning at paper scale.
import { existsSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { assetPath } from '../../core/assets.js';
import { ParamError } from '../../core/errors.js';
import { listFiles } from '../../core/fs.js';
import { canonicalJson, hashFile, sha256 } from '../../core/hash.js';
import { modelIdentity } from '../../core/models.js';
import { Rng } from '../../core/random.js';
import schema from '../../schemas/stages/sft.schema.json';
import type { Metrics, ParamIssue, Stage, StageContext } from '../contract.js';
import { verlNeeds } from '../shared/verl-needs.js';
import { lazyRun } from '../lazy.js';
import { sftSize } from './size.js';
import type { Filters } from './data.js';
import { readChatJsonl } from './examples.js';
import type { Schedule } from '../shared/schedule.js';

export interface SftParams {
  model: string;
  trainer: 'worker' | 'verl';
  verl: {
    nodes: number;
    gpus_per_node: number;
    gpu_memory_gib: number;
    device: 'cuda' | 'cpu';
    stall_timeout_s?: number;
    ray_address?: string;
    python?: string;
  };
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

export function modelIssues(p: SftParams, models: StageContext<SftParams>['models']): ParamIssue[] {
  const m = models[p.model];
  // An undefined name is reported by the reference check.
  if (m && m.provider !== 'worker')
    return [
      {
        param: ['model'],
        message: `sft trains the weights a trainer worker holds: ${p.model} must be a models: entry with provider: worker (it is ${m.provider})`,
      },
    ];
  if (p.trainer !== 'verl') return [];
  // verl's SFT writes full weights; its schedulers are constant and cosine only (verl/workers/config/optimizer.py).
  if (m?.lora_rank)
    return [
      {
        param: ['model'],
        message: `trainer: verl fine-tunes every weight and saves them whole: ${p.model} has lora_rank: ${m.lora_rank}; give it lora_rank: 0 or train with trainer: worker`,
        also: ['trainer'],
      },
    ];
  if (p.schedule === 'linear')
    return [
      {
        param: ['schedule'],
        message: "verl's SFT trainer has constant and cosine schedules only (optim.lr_scheduler_type)",
        also: ['trainer'],
      },
    ];
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

export const sft: Stage<SftParams> = {
  kind: 'sft',
  version: 1,
  description:
    'Supervised fine-tuning of a worker model on agent trajectories or chat conversations (assistant-only loss).',
  schema,
  keyIgnore: ['threads'],
  breakdowns: ['curve'],
  flow: {
    // Its checkpoint/ is served through a models: entry, not read as a template policy (the `policy` artifact).
    gives: ['files'],
    takes: (p) => (p.data ? [] : ['trajectories']),
  },

  placement(p) {
    if (p.trainer !== 'verl') return undefined;
    return `a verl SFT Ray job on ${p.verl.device === 'cpu' ? 'this CPU' : `${p.verl.nodes} × ${p.verl.gpus_per_node} GPUs`} (ray.address, else a Ray head on this machine)`;
  },

  // The worker trainer's model is one the engine checks from the schema's reference; verl loads the weights itself.
  preflight: (p, ctx) => [
    ...(p.trainer === 'verl' ? verlNeeds(p.verl, ctx, { name: p.model, param: ['model'] }) : []),
    ...(p.data ? [{ what: 'conversations file', path: p.data, param: ['data'] }] : []),
  ],

  check(p, ctx) {
    return [...modelIssues(p, ctx.models), ...dataIssues(p, ctx.experimentDir)];
  },

  async keyExtras(p, ctx) {
    const spec = ctx.models[p.model];
    // The trainer's code and its pinned packages decide the weights it writes.
    const verl = p.trainer === 'verl';
    const code = await listFiles(assetPath(verl ? 'gpu/verl/mlepipe_verl' : 'gpu/worker/mlepipe_worker'), (rel) =>
      rel.includes('__pycache__'),
    );
    return {
      model: spec ? modelIdentity(spec) : null,
      data: p.data ? await hashFile(resolve(ctx.experimentDir, p.data)) : null,
      [verl ? 'verl' : 'worker']: sha256(canonicalJson(code)),
      lock: await hashFile(assetPath(verl ? 'python/verl.lock' : 'gpu/worker/requirements.lock')),
    };
  },

  size: sftSize,
  run: lazyRun(() => import('./run.js')),
};
