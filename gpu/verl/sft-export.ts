// A verl run directory for supervised fine-tuning with verl's multi-turn SFT
// trainer (verl.trainer.sft_trainer_ray, Hydra config sft_trainer_engine):
//   data/{train,val}.parquet   one row per conversation, a `messages` column (role, content), as
//                              verl's MultiTurnSFTDataset reads it (no tools: the ReAct scaffold's
//                              actions are in the replies' text)
//   mlepipe_verl/               the job's entrypoint (launch.py sft: checks the cluster, then the trainer)
//   layout.json                 the per-GPU memory estimate the layout was chosen by
//   trainer_overrides.yaml      the Hydra overrides of verl's SFT trainer
// verl trains each message rendered on its own and concatenated (MultiTurnSFTDataset.__getitem__),
// the loss on every assistant message after its generation prompt. Qwen3's template drops the
// <think> block of a reply rendered alone, so the export names mlepipe_verl.sft_dataset's subclass
// (data.custom_cls), which renders each reply as the turn it is generated in. That differs from
// rendering the whole conversation at once (Qwen3 strips earlier turns' reasoning there), so verl's
// check comparing the two is off (data.ignore_input_ids_mismatch). docs/training.md#seed-sft-on-verl.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { cpuEnv, cpuSftOverrides, type CpuRun } from './cpu.js';
import { copyVerlPackage, messagesColumn, writeExportRun, writeLayout, writeParquet } from './export-files.js';
import { type RunNames, runNameOverrides, VERL_VERSION, verlLoggerOverride, withOverrides } from './overrides.js';
import type { Layout } from './scale.js';

export interface SftConversation {
  messages: ReadonlyArray<{ role: string; content: string }>;
}

export interface SftExportOptions {
  /** The weights' folder or hub id verl loads (never the entry's label). */
  model: string;
  /** The tokenizer's folder, where it is not the weights' (a worker checkpoint keeps it beside them). */
  tokenizer?: string;
  epochs: number;
  lr: number;
  schedule: 'constant' | 'cosine';
  warmup: number;
  maxLength: number;
  batchSize: number;
  microBatchSize: number;
  maxGradNorm: number;
  gradientCheckpointing: boolean;
  seed: number;
  nodes: number;
  gpusPerNode: number;
  gpuMemoryGib: number;
  /** Project settings' logger: (verlLoggerOverride). */
  loggers?: readonly ('tensorboard' | 'wandb')[];
  /** A CPU smoke run (device: cpu, gpu/verl/cpu.ts): one worker, no GPU layout. */
  cpu?: CpuRun;
  /** The names of the run on W&B (runNameOverrides); default mlepipe / sft. */
  run?: RunNames;
}

/** A parquet file of one `messages` column: a list of {role, content} per row. */
export async function writeMessagesParquet(file: string, rows: readonly SftConversation[]): Promise<void> {
  const data = rows.map((r) => r.messages.map((m) => ({ role: m.role, content: m.content })));
  await writeParquet(file, messagesColumn('messages'), [{ name: 'messages', data }]);
}

/** The overrides of a layout, in the SFT trainer's keys (its data, model and engine groups). */
export function sftLayoutOverrides(l: Layout): string[] {
  return [
    'data.use_dynamic_bsz=true',
    `data.max_token_len_per_gpu=${l.tokenBudget}`,
    `engine.ulysses_sequence_parallel_size=${l.sp}`,
    `engine.param_offload=${l.offload}`,
    `engine.optimizer_offload=${l.offload}`,
  ];
}

export function sftOverrides(o: SftExportOptions, hasVal: boolean, layout?: Layout): string[] {
  return [
    'data.train_files=data/train.parquet',
    `data.val_files=${hasVal ? 'data/val.parquet' : 'null'}`,
    'data.messages_key=messages',
    `data.train_batch_size=${o.batchSize}`,
    `data.micro_batch_size_per_gpu=${o.microBatchSize}`,
    `data.max_length=${o.maxLength}`,
    // Cut at the end, as the worker cuts; no_padding packs sequences for remove-padding.
    'data.truncation=right',
    'data.pad_mode=no_padding',
    'data.ignore_input_ids_mismatch=true',
    'data.custom_cls.path=mlepipe_verl/sft_dataset.py',
    'data.custom_cls.name=ReplySFTDataset',
    `model.path=${o.model}`,
    ...(o.tokenizer ? [`model.tokenizer_path=${o.tokenizer}`] : []),
    'model.use_remove_padding=true',
    `model.enable_gradient_checkpointing=${o.gradientCheckpointing}`,
    'model.lora_rank=0',
    'engine.strategy=fsdp2',
    `optim.lr=${o.lr}`,
    `optim.lr_scheduler_type=${o.schedule}`,
    `optim.lr_warmup_steps_ratio=${o.warmup}`,
    `optim.clip_grad=${o.maxGradNorm}`,
    `trainer.total_epochs=${o.epochs}`,
    `trainer.nnodes=${o.nodes}`,
    `trainer.n_gpus_per_node=${o.gpusPerNode}`,
    `trainer.seed=${o.seed}`,
    // Validation after every epoch; the weights saved once, at the last step, in Hugging Face form only: the
    // sharded model and optimizer would add 16 B a parameter (131 GB for 8B) that nothing resumes from.
    `trainer.test_freq=${hasVal ? 'after_each_epoch' : -1}`,
    'trainer.save_freq=-1',
    "checkpoint.save_contents=['hf_model']",
    'trainer.default_local_dir=checkpoints',
    verlLoggerOverride(o.loggers),
    ...runNameOverrides(o.run ?? { project: 'mlepipe', name: 'sft' }),
    ...(layout ? sftLayoutOverrides(layout) : []),
  ];
}

export async function writeSftExport(
  dir: string,
  train: readonly SftConversation[],
  val: readonly SftConversation[],
  o: SftExportOptions,
): Promise<string[]> {
  await mkdir(join(dir, 'data'), { recursive: true });
  await writeMessagesParquet(join(dir, 'data', 'train.parquet'), train);
  if (val.length) await writeMessagesParquet(join(dir, 'data', 'val.parquet'), val);
  await copyVerlPackage(dir);
  const cluster = { nodes: o.nodes, gpusPerNode: o.gpusPerNode, gpuMemoryGib: o.gpuMemoryGib, rolloutTp: 1 };
  if (o.cpu) await writeFile(join(dir, 'layout.json'), JSON.stringify({ device: 'cpu' }, null, 1) + '\n');
  const layout = o.cpu
    ? undefined
    : await writeLayout(dir, o.model, cluster, o.maxLength, {
        rollout: false,
        unknown: "verl's own defaults for the token budget and offload apply",
      });
  const overrides = o.cpu
    ? withOverrides(sftOverrides(o, val.length > 0, layout), cpuSftOverrides())
    : sftOverrides(o, val.length > 0, layout);
  await writeExportRun(dir, {
    verl_version: VERL_VERSION,
    trainer: 'sft',
    overrides,
    ...(o.cpu ? { env: cpuEnv(o.cpu, []) } : {}),
  });
  return [
    'data/train.parquet',
    ...(val.length ? ['data/val.parquet'] : []),
    'mlepipe_verl/',
    'layout.json',
    'trainer_overrides.yaml',
  ];
}
