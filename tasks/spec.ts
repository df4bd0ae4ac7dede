// The concrete task specification (the paper's "New DNA"): what the Data
// Strategist decides and the generator, evaluator and writer obey.

/** The seven kinds of task the procedural generator instantiates. */
export type Generator =
  | 'tabular-classification'
  | 'tabular-regression'
  | 'image-classification'
  | 'text-classification'
  | 'audio-classification'
  | 'graph-node-classification'
  | 'time-series-forecasting';

export type TaskMetric =
  'accuracy' | 'macro_f1' | 'roc_auc' | 'log_loss' | 'rmse' | 'mae' | 'r2' | 'quadratic_weighted_kappa';

export interface FeatureSpec {
  name: string;
  kind: 'numeric' | 'categorical';
  /** numeric: normal | lognormal | uniform | exponential, with its parameters. */
  dist?: string;
  mean?: number;
  std?: number;
  mu?: number;
  sigma?: number;
  low?: number;
  high?: number;
  scale?: number;
  levels?: string[];
}

export interface MutationSpec {
  name: string;
  params: Record<string, number | string>;
}

export interface DomainChoice {
  sector: string;
  scenario: string;
  justification: string;
}

export interface TaskSpec {
  task_id: string;
  /** Seed of the Python generator. */
  seed: number;
  source: { seed_id: string; split: string; modality: string; task_type: string; metric: string };
  generator: Generator;
  metric: TaskMetric;
  is_lower_better: boolean;
  scale: 'micro' | 'full';
  n_train: number;
  n_test: number;
  /** Standard deviation of eps in l = f(z) + eps. */
  noise: number;
  domain: DomainChoice & { entity: string; candidates: DomainChoice[] };
  mutations: MutationSpec[];
  target: {
    name: string;
    kind: 'classification' | 'regression';
    classes?: string[];
    scale?: number;
    offset?: number;
    unit?: string;
  };
  features?: FeatureSpec[];
  image_size?: number;
  vocabulary?: { positive: string[]; negative: string[]; neutral: string[] };
  sample_rate?: number;
  seconds?: number;
  media_subject?: string;
  ids: string[];
}

/** How answers and submissions carry the target. */
export function submissionKind(spec: TaskSpec): 'label' | 'prob' | 'value' {
  if (spec.target.kind === 'regression') return 'value';
  return spec.metric === 'roc_auc' || spec.metric === 'log_loss' ? 'prob' : 'label';
}

/** Columns of sample_submission.csv and answer.csv. */
export function submissionColumns(spec: TaskSpec): string[] {
  const kind = submissionKind(spec);
  const classes = spec.target.classes ?? [];
  if (kind === 'prob' && classes.length > 2) return ['id', ...classes];
  return ['id', spec.target.name];
}
