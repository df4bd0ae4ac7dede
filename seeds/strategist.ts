// The Data Strategist as code: from a seed's structural DNA to a concrete
// task spec. Domain attribution from the scenario catalog (five candidates,
// one chosen, each with why the structure fits it), three adversarial
// mutations for the modality, micro-scale dimensions, feature generation
// logic and the target. Every draw comes from (seed, index, attempt).
import { isObject, readJsonSync } from '../core/json-files.js';
import { assetPath } from '../core/assets.js';
import { sha256 } from '../core/hash.js';
import type { FeatureSpec, MutationSpec, TaskSpec } from '../tasks/spec.js';
import { LOWER_IS_BETTER, type SeedDna } from './index.js';
import { Rng } from '../core/random.js';

export interface Scenario {
  sector: string;
  scenario: string;
  entity: string;
  classes: string[];
  regression_target: { name: string; unit: string };
  numeric_features: string[];
  categorical_features: Record<string, string[]>;
  vocabulary: { positive: string[]; negative: string[]; neutral: string[] };
  media_subject: string;
}

type Ranges = Record<string, number[]>;

let catalogs: { scenarios: Scenario[]; mutations: Record<string, Record<string, Ranges>> } | undefined;
export function loadCatalogs(): NonNullable<typeof catalogs> {
  catalogs ??= {
    scenarios: readJsonSync<Scenario[]>(assetPath('seeds/scenarios.json'), (v) =>
      Array.isArray(v) ? undefined : 'expected a JSON array of scenarios',
    ),
    mutations: readJsonSync<Record<string, Record<string, Ranges>>>(assetPath('seeds/mutations.json'), isObject),
  };
  return catalogs;
}

export interface StrategyOptions {
  seed: number;
  index: number;
  attempt?: number;
  samples?: [number, number];
  scale?: 'micro' | 'full';
  /** Full scale: memory the training rows of one task may take (default 1024 MB); it caps the seed's sample count. */
  fullMemoryMb?: number;
  /** Test rows as a share of the training rows (at least one); default: max(100, half the training rows). */
  testFraction?: number;
}

/** Rough bytes one training row takes once loaded, by family: what caps a full-scale task. */
const ROW_BYTES: Record<string, number> = {
  tabular: 1024,
  'time-series': 512,
  graph: 1024,
  text: 2048,
  image: 16_384,
  audio: 32_768,
};

/**
 * Full scale means the seed competition's own training sample count (the
 * paper's "full" is the real dataset), capped only by memory; never fewer rows
 * than the micro task has.
 */
export function fullRows(dna: SeedDna, family: string, nMicro: number, memoryMb = 1024): number {
  const cap = Math.floor((memoryMb * 1024 * 1024) / (ROW_BYTES[family] ?? 1024));
  return Math.max(nMicro, Math.min(dna.dataset_stats.sample_count, cap));
}

const FAMILY: Record<string, string> = {
  'tabular-classification': 'tabular',
  'tabular-regression': 'tabular',
  'image-classification': 'image',
  'text-classification': 'text',
  'audio-classification': 'audio',
  'graph-node-classification': 'graph',
  'time-series-forecasting': 'time-series',
};

const clamp = (x: number, lo: number, hi: number) => Math.max(lo, Math.min(hi, x));
const round = (x: number, d = 3) => Number(x.toFixed(d));

function justify(dna: SeedDna, s: Scenario): string {
  const what: Record<string, string> = {
    tabular: `each ${s.entity} is a row of measurements (${s.numeric_features.slice(0, 3).join(', ')}, …) and categories (${Object.keys(s.categorical_features).join(', ') || 'none'})`,
    image: `each ${s.entity} comes with ${s.media_subject} from a fixed camera, so the signal lives in shapes, counts and colours`,
    text: `each ${s.entity} is described in free text whose wording (${s.vocabulary.positive[0]}, ${s.vocabulary.negative[0]}, …) carries the outcome`,
    audio: `each ${s.entity} produces ${s.media_subject}: pitch, modulation and decay of the sound carry the label`,
    graph: `${s.entity}s are linked to one another, so labels follow communities in the link graph as well as own measurements`,
    'time-series': `${s.regression_target.name} of a ${s.entity} is measured at regular steps, with trend, seasonality and a driver variable`,
  };
  const target =
    dna.target_info.type === 'continuous'
      ? `a continuous ${s.regression_target.name}`
      : `${s.classes.length} outcome levels`;
  return `${dna.modality} data with ${target}: ${what[dna.modality] ?? what.tabular}.`;
}

export function draftSpec(dna: SeedDna, opts: StrategyOptions): TaskSpec {
  const { scenarios, mutations } = loadCatalogs();
  const rng = new Rng('mlepipe-task', opts.seed, dna.id, opts.index, opts.attempt ?? 0);
  const family = FAMILY[dna.generator];
  // The draws keep one order (domain, mutations, sizes, target, noise, features, ids): a seed gives the same task.
  const { chosen, domain } = attributeDomain(dna, scenarios, rng);
  const muts = drawMutations(mutations[family], chosen, rng);

  // Micro-scale dimensions (full scale: the same task with the seed competition's rows).
  const [lo, hi] = opts.samples ?? [50, 200];
  const nMicro = rng.int(lo, hi);
  const n = opts.scale === 'full' ? fullRows(dna, family, nMicro, opts.fullMemoryMb) : nMicro;
  // By default big enough that a guess does not reach the baselines by luck (20 rows give 5% steps of
  // accuracy); the paper's corpus has about a fifth of the training rows (test_fraction: 0.2).
  const nTest = opts.testFraction ? Math.max(1, Math.round(n * opts.testFraction)) : Math.max(100, Math.round(n * 0.5));

  const metric = dna.generate_metric;
  const target = drawTarget(dna, family, chosen, rng);
  const spec: TaskSpec = {
    task_id: '',
    seed: rng.seed(),
    source: { seed_id: dna.id, split: dna.split, modality: dna.modality, task_type: dna.task_type, metric: dna.metric },
    generator: dna.generator,
    metric,
    is_lower_better: LOWER_IS_BETTER[metric],
    scale: opts.scale ?? 'micro',
    n_train: n,
    n_test: nTest,
    noise: round(rng.uniform(0.2, 0.45)),
    domain,
    mutations: muts,
    target,
    media_subject: chosen.media_subject,
    ids: [],
  };

  if (family === 'tabular') spec.features = tabularFeatures(dna, chosen, rng);
  if (family === 'image') spec.image_size = clamp(Math.min(dna.image?.width ?? 32, dna.image?.height ?? 32), 24, 40);
  if (family === 'text') spec.vocabulary = chosen.vocabulary;
  if (family === 'audio') Object.assign(spec, { sample_rate: 8000, seconds: 0.5 });

  // Ids: a permutation, so that their order says nothing about train and test.
  const prefix = chosen.entity.replace(/[^a-z]/g, '').slice(0, 3) || 'row';
  const total = n + nTest;
  const width = String(total * 10).length;
  spec.ids = rng
    .shuffle(Array.from({ length: total }, (_, i) => i))
    .map((i) => `${prefix}${String(i).padStart(width, '0')}`);
  spec.task_id = `${dna.id
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .slice(
      0,
      28,
    )}-${chosen.sector.toLowerCase().replace(/[^a-z]+/g, '')}-${sha256(JSON.stringify([opts.seed, opts.index, opts.attempt ?? 0, dna.id, opts.scale ?? 'micro'])).slice(0, 8)}`;
  return spec;
}

/** Domain attribution: five candidates whose structure fits, one chosen. */
function attributeDomain(dna: SeedDna, scenarios: readonly Scenario[], rng: Rng) {
  const candidates = rng.shuffle(scenarios).slice(0, 5);
  const chosen = candidates[0];
  const domain = {
    sector: chosen.sector,
    scenario: chosen.scenario,
    entity: chosen.entity,
    justification: justify(dna, chosen),
    candidates: candidates.map((c) => ({ sector: c.sector, scenario: c.scenario, justification: justify(dna, c) })),
  };
  return { chosen, domain };
}

/** Adversarial mutations: three from the modality's catalog, each with its parameters drawn from their ranges. */
function drawMutations(catalog: Record<string, Ranges>, chosen: Scenario, rng: Rng): MutationSpec[] {
  const picked = rng.shuffle(Object.keys(catalog)).slice(0, 3).sort();
  return picked.map((name) => {
    const params: Record<string, number | string> = {};
    for (const [k, [lo, hi]] of Object.entries(catalog[name])) {
      params[k] =
        Number.isInteger(lo) && Number.isInteger(hi) && hi - lo >= 1 ? rng.int(lo, hi) : round(rng.uniform(lo, hi));
    }
    if (name === 'high_cardinality')
      Object.assign(params, { column: `${chosen.entity}_code`, prefix: chosen.entity.slice(0, 2).toUpperCase() });
    if (name === 'distractors') params.prefix = 'aux';
    if (name === 'correlated') params.suffix = 'alt';
    return { name, params };
  });
}

/** What the task predicts: the scenario's quantity, or its outcome levels (as few as a micro task supports). */
function drawTarget(dna: SeedDna, family: string, chosen: Scenario, rng: Rng): TaskSpec['target'] {
  const metric = dna.generate_metric;
  const regression = dna.generator === 'tabular-regression' || dna.generator === 'time-series-forecasting';
  if (regression)
    return {
      name: chosen.regression_target.name,
      kind: 'regression' as const,
      unit: chosen.regression_target.unit,
      scale: round(rng.uniform(5, 50)),
      offset: round(rng.uniform(20, 200)),
    };
  const card = dna.target_info.cardinality;
  let classes: string[];
  if (metric === 'quadratic_weighted_kappa') {
    const k = clamp(card || 4, 3, 5);
    classes = Array.from({ length: k }, (_, i) => String(i));
  } else {
    // Micro-scale: a few dozen rows cannot support many classes (images and text, fewer still).
    const most = family === 'image' || family === 'text' ? 3 : 4;
    const k = metric === 'roc_auc' && card === 2 ? 2 : clamp(card || 3, 2, most);
    classes = Array.from({ length: k }, (_, i) => chosen.classes[i] ?? `class_${i}`);
  }
  return { name: `${chosen.entity}_outcome`, kind: 'classification' as const, classes };
}

function tabularFeatures(dna: SeedDna, s: Scenario, rng: Rng): FeatureSpec[] {
  const nNum = clamp(dna.tabular?.numeric_features ?? 5, 3, Math.min(8, s.numeric_features.length));
  const nCat = clamp(
    dna.tabular?.categorical_features ?? 1,
    0,
    Math.min(2, Object.keys(s.categorical_features).length),
  );
  const out: FeatureSpec[] = [];
  for (const name of rng.shuffle(s.numeric_features).slice(0, nNum)) {
    const dist = rng.pick(['normal', 'lognormal', 'uniform', 'exponential']);
    const f: FeatureSpec = { name, kind: 'numeric', dist };
    if (dist === 'normal') Object.assign(f, { mean: round(rng.uniform(10, 100)), std: round(rng.uniform(2, 20)) });
    if (dist === 'lognormal') Object.assign(f, { mu: round(rng.uniform(1, 4)), sigma: round(rng.uniform(0.3, 0.8)) });
    if (dist === 'uniform') {
      const low = round(rng.uniform(0, 10));
      Object.assign(f, { low, high: round(low + rng.uniform(10, 100)) });
    }
    if (dist === 'exponential') Object.assign(f, { scale: round(rng.uniform(1, 20)) });
    out.push(f);
  }
  for (const name of rng.shuffle(Object.keys(s.categorical_features)).slice(0, nCat)) {
    out.push({ name, kind: 'categorical', levels: s.categorical_features[name] });
  }
  return out;
}
