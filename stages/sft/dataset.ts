// The sft node's dataset: examples read (a chat JSONL file, or the inputs' trajectories), filtered,
// deduplicated and split, then written as TRL's conversational JSONL with the funnel of what each step left out.
import { mkdir, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { trajectoryFiles } from '../../agents/trajectory-files.js';
import { ParamError, StageFailure } from '../../core/errors.js';
import { formatJsonl } from '../../core/json-files.js';
import type { StageContext } from '../contract.js';
import { applyFilters, splitExamples } from './data.js';
import { readChatJsonl, trajectoryExamples, type Example } from './examples.js';
import { dedup } from './dedup.js';
import type { SftParams } from './index.js';

export interface Dataset {
  train: Example[];
  val: Example[];
  /** How many examples were read, skipped, filtered out and removed as duplicates, and how many are left. */
  funnel: {
    read: number;
    skipped: number;
    filtered_out: Record<string, number>;
    duplicates: number;
    train: number;
    val: number;
  };
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
    for (const { file } of trajectoryFiles(input.dir)) {
      const r = trajectoryExamples(file, `${input.id}/${file.slice(input.dir.length + 1)}`);
      out.push(...r.examples);
      skipped += r.skipped;
    }
  }
  return { examples: out, skipped };
}

/** Only the conversation of each example, as the trainer reads it. */
const conversations = (xs: readonly Example[]) => formatJsonl(xs.map((e) => ({ messages: e.messages })));

/** Reads, filters, deduplicates and splits the examples, and writes them into the node's dataset/. */
export async function prepareDataset(ctx: StageContext<SftParams>): Promise<Dataset> {
  const p = ctx.params;
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
  await writeFile(join(ctx.outDir, 'dataset', 'train.jsonl'), conversations(train));
  await writeFile(join(ctx.outDir, 'dataset', 'val.jsonl'), conversations(val));
  await writeFile(join(ctx.outDir, 'dataset', 'funnel.json'), JSON.stringify(funnel, null, 1) + '\n');
  if (!train.length)
    throw new StageFailure(
      `no training examples are left (${JSON.stringify(funnel)}): loosen filter: or give more data`,
    );
  return { train, val, funnel };
}
