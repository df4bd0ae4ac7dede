// The seed library: one structural-DNA file per competition under
// seeds/mlebench/, checked by schemas/seed-dna.schema.json, and the named
// seed sets `generate` can take.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { assetPath } from '../core/assets.js';
import { UserError } from '../core/errors.js';
import { readJsonFileSync } from '../core/text.js';
import dnaSchema from '../schemas/seed-dna.schema.json';
import { validateWithSchema } from '../core/jsonschema.js';
import { suggestion } from '../core/suggest.js';
import type { Generator, TaskMetric } from '../tasks/spec.js';

// The generators and metrics are the task contract's (tasks/spec.ts); seeds choose among them.
export type { Generator, TaskMetric };

export const LOWER_IS_BETTER: Record<TaskMetric, boolean> = {
  accuracy: false,
  macro_f1: false,
  roc_auc: false,
  log_loss: true,
  rmse: true,
  mae: true,
  r2: false,
  quadratic_weighted_kappa: false,
};

export interface SeedDna {
  id: string;
  split: 'medium' | 'hard' | 'dev' | 'kaggle-extra';
  modality: 'tabular' | 'image' | 'text' | 'audio' | 'graph' | 'time-series';
  task_type: string;
  metric: string;
  is_lower_better: boolean;
  dataset_stats: { sample_count: number; is_imbalanced: boolean };
  target_info: { type: string; cardinality: number; distribution: string };
  tabular?: { numeric_features: number; categorical_features: number; max_cardinality: number };
  image?: { width: number; height: number; channels: number };
  text?: { mean_words: number };
  audio?: { sample_rate: number; seconds: number };
  graph?: { nodes: number; edges: number };
  time_series?: { length: number; channels: number };
  generator: Generator;
  generate_metric: TaskMetric;
}

let cache: SeedDna[] | undefined;

/** Every DNA file, validated; a broken one is an error naming the file. */
export function allSeeds(): SeedDna[] {
  if (cache) return cache;
  const dir = assetPath('seeds/mlebench');
  const out: SeedDna[] = [];
  for (const name of readdirSync(dir)
    .filter((n) => n.endsWith('.json'))
    .sort()) {
    const file = join(dir, name);
    const data = readJsonFileSync(file) as SeedDna;
    const errs = validateWithSchema(dnaSchema, data, new Map([['', { value: { file, line: 1, col: 1 } }]]), []);
    if (errs.length) throw new UserError(errs.map((e) => ({ ...e, message: `seed DNA: ${e.message}` })));
    if (`${data.id}.json` !== name) throw new UserError(`${file}: id "${data.id}" does not match the file name`);
    out.push(data);
  }
  cache = out;
  return out;
}

/** Named sets: `mlebench` (MLE-bench outside Lite), `mlebench-<modality>`, `all` (with the extra Kaggle seeds). */
export const SEED_SETS: Record<string, (d: SeedDna) => boolean> = {
  mlebench: (d) => d.split !== 'kaggle-extra',
  all: () => true,
  'mlebench-tabular': (d) => d.split !== 'kaggle-extra' && d.modality === 'tabular',
  'mlebench-image': (d) => d.split !== 'kaggle-extra' && d.modality === 'image',
  'mlebench-text': (d) => d.split !== 'kaggle-extra' && d.modality === 'text',
  'mlebench-audio': (d) => d.split !== 'kaggle-extra' && d.modality === 'audio',
  'mlebench-graph': (d) => d.split !== 'kaggle-extra' && d.modality === 'graph',
  'mlebench-time-series': (d) => d.split !== 'kaggle-extra' && d.modality === 'time-series',
};

/** Names in `seeds:` that are no set (a string) or no seed id (list items, by index), each with a suggestion. */
export function unknownSeeds(set: string | readonly string[]): Array<{ index?: number; message: string }> {
  if (typeof set === 'string') {
    const sets = Object.keys(SEED_SETS);
    return Object.hasOwn(SEED_SETS, set)
      ? []
      : [{ message: `unknown seed set "${set}"${suggestion(set, sets)} (sets: ${sets.join(', ')})` }];
  }
  const ids = allSeeds().map((d) => d.id);
  return set.flatMap((id, index) =>
    ids.includes(id) ? [] : [{ index, message: `unknown seed "${id}"${suggestion(id, ids)}` }],
  );
}

/**
 * Seeds of a set (or an explicit list of ids), restricted to some generators,
 * interleaved by generator so that any prefix covers every kind present.
 */
export function selectSeeds(set: string | readonly string[], generators?: readonly string[]): SeedDna[] {
  const seeds = allSeeds();
  let chosen: SeedDna[];
  const unknown = unknownSeeds(set);
  if (unknown.length) throw new UserError(unknown.map((u) => u.message).join('; '));
  if (typeof set === 'string') chosen = seeds.filter(SEED_SETS[set]);
  else chosen = seeds.filter((d) => set.includes(d.id));
  if (generators?.length)
    chosen = chosen.filter((d) => generators.includes(d.generator) || generators.includes(d.modality));
  const groups = new Map<string, SeedDna[]>();
  for (const d of chosen) groups.set(d.generator, [...(groups.get(d.generator) ?? []), d]);
  const lists = [...groups.values()];
  const out: SeedDna[] = [];
  for (let i = 0; out.length < chosen.length; i++) for (const l of lists) if (i < l.length) out.push(l[i]);
  return out;
}
