// The registered tools of the shared, tabular and time-series modules (NLP, vision and
// graph are in catalog-more.ts). Names are the snake_case forms of the tools' titles;
// files are paths relative to the workspace, where the task's files sit under public/.
import { def, file, int, list, num, optTarget, seed, seriesArgs, str, table, target } from './define.js';
import { MORE_TOOLS } from './catalog-more.js';
import type { ArgSchema, Domain, ToolSpec } from './types.js';

const shared = (n: string, r: string, p: Record<string, ArgSchema>, req: string[]) => def('shared', n, r, p, req);
const tab = (n: string, r: string, p: Record<string, ArgSchema>, req: string[] = ['path']) =>
  def('tabular', n, r, p, req);
const ts = (n: string, r: string, p: Record<string, ArgSchema> = {}, req: string[] = ['path']) =>
  def('time-series', n, r, { ...seriesArgs, ...p }, req);

const CORE_TOOLS: readonly ToolSpec[] = [
  shared(
    'discover_log_metrics',
    'metric names, sample values and occurrence counts in a log or captured output',
    { path: file },
    ['path'],
  ),
  shared(
    'extract_training_metric_series',
    'value-step series of the requested logged metrics',
    { path: file, metrics: list('metric names (default: all but step counters)') },
    ['path'],
  ),
  shared(
    'verify_hyperparam_effective',
    'where each parameter is set in a script, conflicting values and environment reads (static analysis)',
    { path: str('Python file'), params: list('names to check (default: those set more than once)') },
    ['path'],
  ),
  shared(
    'estimate_peak_memory',
    'peak memory of a short run of a training script, GPU peak where one is visible, and whether it ran out of memory',
    {
      script: str('Python file to run'),
      seconds: num('probe window in seconds', 20),
      args: list('arguments for the script'),
    },
    ['script'],
  ),
  shared(
    'trace_tensor_shapes',
    'per-layer tensor shapes of a CPU forward pass on zeros, or where it failed',
    {
      path: str('Python file defining the model'),
      model: str('class or function building the model with no arguments'),
      input_shape: { type: 'array', items: { type: 'integer' }, description: 'input shape, e.g. 2,3,32,32' },
      dtype: {
        type: 'string',
        description: 'torch dtype of the dummy input',
        enum: ['float32', 'long', 'int64'],
        default: 'float32',
      },
    },
    ['path', 'model', 'input_shape'],
  ),
  shared(
    'check_config_consistency',
    'rule checks over a config file (JSON, key: value, or Python assignments): learning rate, warmup, heads, sequence length, precision',
    { path: file },
    ['path'],
  ),
  shared(
    'validate_output_format',
    'record-format compliance: missing or extra fields, record count, empty values, length and pattern violations',
    {
      path: file,
      required_fields: list('fields every record needs'),
      sample: str('a sample submission whose fields, ids and row count must match'),
      max_length: int('longest allowed value'),
      pattern: str('regular expression every value of FIELD must match'),
      field: str('the field the length and pattern apply to (default: text fields)'),
      expected_rows: int('record count'),
    },
    ['path'],
  ),

  tab('detect_missing_values', 'per-column missing counts and fractions with an imputation suggestion', {
    path: table,
  }),
  tab('identify_feature_types', 'inferred type of every column, unique counts, ID-like and high-cardinality flags', {
    path: table,
    high_cardinality: int('unique values above which a categorical column is flagged', 50),
  }),
  tab(
    'detect_label_imbalance',
    'class counts, majority/minority ratio and a resampling suggestion',
    { path: table, target },
    ['path', 'target'],
  ),
  tab('check_feature_normalization', 'numeric ranges, means, standard deviations and whether to scale', {
    path: table,
    target: optTarget,
  }),
  tab('detect_outliers', 'per-column outlier counts outside the IQR bounds', {
    path: table,
    k: num('IQR multiplier', 1.5),
    target: optTarget,
  }),
  tab(
    'correlation_analysis',
    'highly correlated feature pairs, and features that track the label almost exactly (possible leakage)',
    { path: table, threshold: num('|r| at or above which a pair is listed', 0.9), target: optTarget },
  ),
  tab('cardinality_check', 'unique counts of categorical columns with a suggested encoding', {
    path: table,
    target: optTarget,
  }),
  tab('feature_skewness_checker', 'skewness of numeric features with a suggested transformation', {
    path: table,
    threshold: num('|skewness| that counts as skewed', 1),
    target: optTarget,
  }),
  tab('duplicate_row_detector', 'exact duplicate rows: count, fraction and the first positions', {
    path: table,
    ignore: list('columns to leave out of the comparison, e.g. an id'),
  }),
  tab(
    'detect_train_test_overlap',
    'rows of the second file that also appear in the first, on the chosen columns',
    {
      train: table,
      test: table,
      columns: list('columns to compare (default: all shared)'),
      ignore: list('columns to leave out, e.g. an id'),
    },
    ['train', 'test'],
  ),
  tab('encoding_strategy_advisor', 'an encoding for every column from its type, cardinality and the sample size', {
    path: table,
    target: optTarget,
  }),
  tab(
    'feature_interaction_detector',
    'numeric feature pairs whose product adds most mutual information with the label',
    { path: table, target, top_k: int('pairs to list', 5), max_rows: int('rows sampled', 3000), seed },
    ['path', 'target'],
  ),

  ts('zscore_anomaly_detector', 'positions and z-scores of points far from the global mean', {
    threshold: num('|z| that counts as an anomaly', 3),
  }),
  ts('iqr_anomaly_detector', 'positions of points outside the IQR bounds, and the bounds', {
    k: num('IQR multiplier', 1.5),
  }),
  ts('moving_window_anomaly_detector', 'points unusual against the window before them', {
    window: int('window length', 20),
    threshold: num('local standard deviations', 4),
  }),
  ts('trend_detection', 'linear slope with its fit, and Kendall tau with its p-value'),
  ts('plateau_detector', "the tail's slope and relative change, and whether it is a plateau", {
    tail_fraction: num('share of the series that is the tail', 0.2),
    tolerance: num('relative change below which the tail is flat', 0.01),
  }),
  ts('convergence_estimator', 'step volatility early and late and whether the series has converged', {
    fraction: num('share of the series at each end', 0.2),
  }),
  ts('change_point_detection', 'the largest mean shift: where it is, the means before and after, its significance'),
  ts('spike_detector', 'abrupt steps much larger than the typical step', {
    threshold: num('multiple of the typical step', 6),
  }),
  ts('volatility_analysis', 'overall, step and rolling standard deviations', { window: int('rolling window', 10) }),
  ts('nan_inf_health_detector', 'NaN and infinite values, the first one, and very large magnitudes', {
    large: num('magnitude that counts as very large', 1e6),
  }),
  ts(
    'seasonality_detector',
    'the dominant period from the periodogram, its share of power and the autocorrelation there',
  ),
  ts('acf', 'autocorrelation by lag and the significant lags', { nlags: int('lags', 20) }),
  ts('pacf', 'partial autocorrelation by lag and a suggested autoregressive order', { nlags: int('lags', 20) }),
  ts('stationarity_test_adf', 'augmented Dickey-Fuller statistic, p-value, and whether to difference', {
    alpha: num('significance level', 0.05),
  }),
  def(
    'time-series',
    'granger_causality_test',
    'whether one column helps predict another (F tests per lag)',
    {
      path: table,
      cause: str('column that may cause'),
      effect: str('column that may be caused'),
      maxlag: int('largest lag tested', 4),
      alpha: num('significance level', 0.05),
    },
    ['path', 'cause', 'effect'],
  ),
];

export const TOOLS: readonly ToolSpec[] = [...CORE_TOOLS, ...MORE_TOOLS];

/** Python module of each domain, under tools/py/mlepipe_tools. */
export const MODULES: Record<Domain, string> = {
  shared: 'shared',
  tabular: 'tabular',
  'time-series': 'timeseries',
  nlp: 'nlp',
  vision: 'vision',
  graph: 'graph',
};
