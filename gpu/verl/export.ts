// `trainer: verl-export`: a run directory for verl's multi-turn GRPO, written
// and not launched. data/{train,val}.parquet hold one row per task in verl's
// RL dataset layout (data_source, prompt as chat messages, ability,
// reward_model, extra_info); agent_loop.yaml describes the ReAct loop and
// the sandbox command that executes code; trainer_overrides.yaml holds the
// Hydra overrides for verl.trainer.main_ppo; launch.sh puts them together.
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { renderPrompt } from '../../agents/factory/answers.js';

/** A task folder and its id, as the stage lists them. */
export interface TaskRef {
  id: string;
  dir: string;
}

/** The verl release the overrides are written for. */
export const VERL_VERSION = '0.5.0';

export interface ExportOptions {
  model: string;
  reward: string;
  groupSize: number;
  batchSize: number;
  steps: number;
  maxTurns: number;
  stepTimeoutS: number;
  lr: number;
  clipLow: number;
  clipHigh: number;
  kl: number;
  temperature: number;
  advantage: 'grpo' | 'drgrpo';
}

async function rows(tasks: readonly TaskRef[], split: string, maxTurns: number, stepTimeoutS: number) {
  const out = [];
  for (const [index, t] of tasks.entries()) {
    const description = await readFile(join(t.dir, 'public', 'description.md'), 'utf8').catch(() => '');
    out.push({
      data_source: 'mlepipe',
      prompt: [
        { role: 'system', content: renderPrompt('react/system', { max_turns: maxTurns, step_timeout: stepTimeoutS }) },
        { role: 'user', content: renderPrompt('react/task', { description: description.trim() }) },
      ],
      ability: 'mle',
      reward_model: { style: 'rule', ground_truth: t.id },
      extra_info: { split, index, task_id: t.id, task_dir: t.dir },
    });
  }
  return out;
}

const str = (name: string) => ({ name, type: 'BYTE_ARRAY' as const, converted_type: 'UTF8' as const, repetition_type: 'OPTIONAL' as const });

async function writeParquet(file: string, data: Awaited<ReturnType<typeof rows>>): Promise<void> {
  const { parquetWriteBuffer } = await import('hyparquet-writer');
  const schema = [
    { name: 'root', num_children: 5 },
    str('data_source'),
    { name: 'prompt', repetition_type: 'OPTIONAL', converted_type: 'LIST', num_children: 1 },
    { name: 'list', repetition_type: 'REPEATED', num_children: 1 },
    { name: 'element', repetition_type: 'OPTIONAL', num_children: 2 },
    str('role'),
    str('content'),
    str('ability'),
    { name: 'reward_model', repetition_type: 'OPTIONAL', num_children: 2 },
    str('style'),
    str('ground_truth'),
    { name: 'extra_info', repetition_type: 'OPTIONAL', num_children: 4 },
    str('split'),
    { name: 'index', type: 'INT32', repetition_type: 'OPTIONAL' },
    str('task_id'),
    str('task_dir'),
  ];
  const columnData = ['data_source', 'prompt', 'ability', 'reward_model', 'extra_info'].map((name) => ({ name, data: data.map((r) => r[name as keyof (typeof data)[number]]) }));
  const buf = parquetWriteBuffer({ schema: schema as never, columnData: columnData as never });
  await writeFile(file, Buffer.from(buf));
}

export async function writeVerlExport(dir: string, train: readonly TaskRef[], val: readonly TaskRef[], o: ExportOptions): Promise<string[]> {
  await mkdir(join(dir, 'data'), { recursive: true });
  await writeParquet(join(dir, 'data', 'train.parquet'), await rows(train, 'train', o.maxTurns, o.stepTimeoutS));
  await writeParquet(join(dir, 'data', 'val.parquet'), await rows(val, 'val', o.maxTurns, o.stepTimeoutS));
  const agentLoop = {
    verl_version: VERL_VERSION,
    agent: 'react',
    format: '<think>…</think> then one ```python block, <validate>FILE</validate> or <answer>FILE</answer>',
    max_turns: o.maxTurns,
    step_timeout_s: o.stepTimeoutS,
    // Each code block runs in a fresh jail beside the task's public/ files.
    execute: 'mlepipe sandbox run --task {extra_info.task_dir} --warm --timeout {step_timeout_s} STEP.py',
    grade: 'python {extra_info.task_dir}/private/evaluator.py --submission_path submission.csv',
    reward: { formula: o.reward, variables: 'format, execute, median, bronze, silver, gold (docs/experiments.md#reward-formulas)' },
    loss_mask: 'assistant turns only; observations are masked out',
  };
  const overrides = [
    `algorithm.adv_estimator=grpo`,
    `algorithm.norm_adv_by_std_in_grpo=${o.advantage === 'grpo'}`,
    `algorithm.use_kl_in_reward=false`,
    `data.train_files=${join(dir, 'data', 'train.parquet')}`,
    `data.val_files=${join(dir, 'data', 'val.parquet')}`,
    `data.train_batch_size=${o.batchSize}`,
    `data.return_raw_chat=true`,
    `actor_rollout_ref.model.path=${o.model}`,
    `actor_rollout_ref.actor.optim.lr=${o.lr}`,
    `actor_rollout_ref.actor.clip_ratio_low=${o.clipLow}`,
    `actor_rollout_ref.actor.clip_ratio_high=${o.clipHigh}`,
    `actor_rollout_ref.actor.use_kl_loss=${o.kl > 0}`,
    `actor_rollout_ref.actor.kl_loss_coef=${o.kl}`,
    `actor_rollout_ref.rollout.n=${o.groupSize}`,
    `actor_rollout_ref.rollout.temperature=${o.temperature}`,
    `actor_rollout_ref.rollout.multi_turn.enable=true`,
    `actor_rollout_ref.rollout.multi_turn.max_assistant_turns=${o.maxTurns}`,
    `trainer.total_training_steps=${o.steps}`,
  ];
  await writeFile(join(dir, 'agent_loop.yaml'), stringify(agentLoop));
  await writeFile(join(dir, 'trainer_overrides.yaml'), stringify({ verl_version: VERL_VERSION, overrides }));
  await writeFile(
    join(dir, 'launch.sh'),
    `#!/usr/bin/env bash\n# Written by mlepipe for verl ${VERL_VERSION}; not run by mlepipe. Review, then run on the training cluster.\nset -euo pipefail\ncd "$(dirname "$0")"\npython3 -m verl.trainer.main_ppo \\\n${overrides.map((x) => `  '${x}'`).join(' \\\n')}\n`,
    { mode: 0o755 },
  );
  return ['data/train.parquet', 'data/val.parquet', 'agent_loop.yaml', 'trainer_overrides.yaml', 'launch.sh'];
}
