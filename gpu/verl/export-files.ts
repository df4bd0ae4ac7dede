// What every verl export writes the same way, whichever trainer reads it
// (main_ppo for GRPO, the SFT trainer for sft): parquet files whose chat
// column is a list of {role, content}, the mlepipe_verl package the job
// imports, and layout.json, the per-GPU estimate its layout was chosen by.
import { cp, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { assetPath } from '../../core/assets.js';
import { InternalError, ParamError } from '../../core/errors.js';
import { layoutFor, type Layout } from './scale.js';

export const str = (name: string) => ({
  name,
  type: 'BYTE_ARRAY' as const,
  converted_type: 'UTF8' as const,
  repetition_type: 'OPTIONAL' as const,
});

/** The schema entries of one column holding a conversation: a list of {role, content}. */
export const messagesColumn = (name: string) => [
  { name, repetition_type: 'OPTIONAL', converted_type: 'LIST', num_children: 1 },
  { name: 'list', repetition_type: 'REPEATED', num_children: 1 },
  { name: 'element', repetition_type: 'OPTIONAL', num_children: 2 },
  str('role'),
  str('content'),
];

/** One parquet file: the schema's leaves after a root of `columns.length` children, each column's values by row. */
export async function writeParquet(
  file: string,
  schema: readonly object[],
  columns: ReadonlyArray<{ name: string; data: readonly unknown[] }>,
): Promise<void> {
  const { parquetWriteBuffer } = await import('hyparquet-writer');
  const full = [{ name: 'root', num_children: columns.length }, ...schema];
  await writeFile(file, Buffer.from(parquetWriteBuffer({ schema: full as never, columnData: columns as never })));
}

/** The Python package the job imports (agent loop, dataset, checks, entrypoint), without bytecode. */
export async function copyVerlPackage(dir: string): Promise<void> {
  await cp(assetPath('gpu/verl/mlepipe_verl'), join(dir, 'mlepipe_verl'), {
    recursive: true,
    filter: (src) => !src.includes('__pycache__'),
  });
}

/**
 * The layout for the model on the cluster, written to layout.json (or, for a model of unknown shape, what
 * applies instead); a layout that cannot fit is refused at the stage's verl: key.
 */
export async function writeLayout(
  dir: string,
  model: string,
  cluster: Parameters<typeof layoutFor>[1],
  seqTokens: number,
  o: { rollout: boolean; unknown: string },
): Promise<Layout | undefined> {
  const layout = layoutFor(model, cluster, seqTokens, { rollout: o.rollout });
  if (layout && 'error' in layout) throw new ParamError(['verl'], layout.error);
  await writeFile(
    join(dir, 'layout.json'),
    JSON.stringify(
      layout ?? { unknown: `the shape of ${model} is unknown (no config.json there, not a known name): ${o.unknown}` },
      null,
      1,
    ) + '\n',
  );
  return layout;
}

/**
 * trainer_overrides.yaml: the run an export describes. `overrides` are the trainer's Hydra overrides; `env`, where
 * present, what the job's processes need in their environment besides (a CPU run's platform module and vLLM's
 * device), which `trainer: verl` and launch.sh hand to the job's runtime environment.
 */
export interface ExportRun {
  verl_version: string;
  trainer?: 'sft';
  overrides: string[];
  env?: Record<string, string>;
}

export async function writeExportRun(dir: string, run: ExportRun): Promise<void> {
  const { stringify } = await import('yaml');
  await writeFile(join(dir, 'trainer_overrides.yaml'), stringify(run));
}

export async function readExportRun(dir: string): Promise<ExportRun> {
  const { parse } = await import('yaml');
  const run = parse(await readFile(join(dir, 'trainer_overrides.yaml'), 'utf8')) as ExportRun;
  if (!run || !Array.isArray(run.overrides))
    throw new InternalError(`${join(dir, 'trainer_overrides.yaml')} holds no overrides: list`);
  return run;
}
