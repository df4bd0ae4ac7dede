// Every diagnostic tool on built suite instances, called as an agent would: only the
// file paths, the columns the task's description names and the tool's own defaults
// (never a `field` hint). Where the instance carries a fault a tool targets, the
// answer names it; on healthy instances the verdicts stay quiet. Instances are built
// once and shared, one sandbox session per instance.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execa } from 'execa';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pythonEnv } from '../../core/python.js';
import { listTools } from '../../tools/index.js';
import { toolSession } from '../tools-data.js';
import { ROOT } from '../helpers.js';

type Row = Record<string, unknown>;
type Answer = { ok: boolean; text: string; evidence: Row };
type Session = Awaited<ReturnType<typeof toolSession>>;

const IDS = [
  'tabular-train-09',
  'tabular-id-03',
  'time_series-train-01',
  'nlp-train-01',
  'nlp-train-02',
  'cv-train-05',
  'cv-train-02',
  'graph-train-01',
  'graph-id-01',
];
const out = await mkdtemp(join(tmpdir(), 'mltb-tools-'));
const built = await execa(
  pythonEnv('agent').python,
  ['-m', 'mltoolbench', 'build', ...IDS, '--out', out, '--runs', '1'],
  { cwd: join(ROOT, 'tasks', 'py'), reject: false, env: { PYTHONDONTWRITEBYTECODE: '1' } },
);
if (built.exitCode !== 0) throw new Error(built.stderr);
const sessions = new Map<string, Session>();
const called = new Set<string>();

async function call(id: string, name: string, args: Row): Promise<Answer> {
  if (!sessions.has(id)) sessions.set(id, await toolSession(false, join(out, `mltb-v1-${id}`)));
  called.add(name);
  return (await sessions.get(id)!.run(name, args)) as Answer;
}
async function ok(id: string, name: string, args: Row): Promise<Answer> {
  const a = await call(id, name, args);
  assert.ok(a.ok, `${id} ${name}: ${a.text}`);
  return a;
}
/** A tool whose input the suite's files do not hold: it says which columns or files there are, and does not crash. */
async function inapplicable(id: string, name: string, args: Row) {
  const a = await call(id, name, args);
  assert.is(a.ok, false, `${id} ${name}`);
  assert.match(a.text, /no column|no such file|no metric|log-probabilities/, `${id} ${name}: ${a.text}`);
}
const violated = (a: Answer) => (a.evidence.checks as Row[]).filter((c) => !c.ok).map((c) => String(c.rule));

test("shared: the config checker reads the starters' constants; the output format check covers text fields unasked", async () => {
  for (const id of ['tabular-train-09', 'nlp-train-01', 'cv-train-05', 'graph-train-01', 'time_series-train-01']) {
    const c = await ok(id, 'check_config_consistency', { path: 'public/train.py' });
    assert.ok((c.evidence.checks as Row[]).length >= 1, `${id}: ${c.text}`);
    assert.equal(violated(c), [], id);
  }
  assert.equal(violated(await ok('tabular-id-03', 'check_config_consistency', { path: 'public/train.py' })), [
    'inverse regularization C at least 0.01 (smaller shrinks the model to its intercept)',
  ]);
  assert.equal(violated(await ok('nlp-train-02', 'check_config_consistency', { path: 'public/train.py' })), [
    'context of at least 16 tokens',
  ]);
  const long = await ok('nlp-train-01', 'validate_output_format', { path: 'public/train.csv', max_length: 50 });
  assert.is(long.evidence.too_long, 700);
  assert.is(
    (
      await ok('nlp-train-01', 'validate_output_format', {
        path: 'public/sample_submission.csv',
        sample: 'public/sample_submission.csv',
      })
    ).evidence.ok,
    true,
  );
  const h = await ok('tabular-train-09', 'verify_hyperparam_effective', { path: 'public/train.py' });
  assert.equal(
    (h.evidence.params as Row[]).filter((p) => p.conflicting),
    [],
  );
  await ok('tabular-train-09', 'discover_log_metrics', { path: 'public/train.py' });
  await inapplicable('tabular-train-09', 'extract_training_metric_series', {
    path: 'public/description.md',
    metrics: ['loss'],
  });
  const mem = await ok('graph-train-01', 'estimate_peak_memory', {
    script: 'public/train.py',
    seconds: 60,
    args: ['--out', '/tmp/submission.csv'],
  });
  assert.equal([mem.evidence.oom, mem.evidence.exit_code], [false, 0]);
  // The starters are scikit-learn models: there is no torch module to trace, and the tool says so.
  const shapes = await call('graph-train-01', 'trace_tensor_shapes', {
    path: 'public/train.py',
    model: 'model',
    input_shape: [2, 24],
  });
  assert.ok(!shapes.ok || shapes.evidence.ok === false, shapes.text);
});

test('tabular: missing ages, unscaled fares, no false duplicates or overlap', async () => {
  const T = { path: 'public/train.csv' };
  const id = 'tabular-train-09';
  assert.equal((await ok(id, 'detect_missing_values', T)).text.split(';')[0], '1 of 7 columns have missing values');
  assert.match((await ok(id, 'identify_feature_types', T)).text, 'ID-like (drop before training): id');
  assert.match((await ok(id, 'detect_label_imbalance', { ...T, target: 'survived' })).text, 'balanced enough');
  assert.match((await ok(id, 'check_feature_normalization', { ...T, target: 'survived' })).text, 'standardize');
  await ok(id, 'detect_outliers', { ...T, target: 'survived' });
  await ok(id, 'correlation_analysis', { ...T, target: 'survived' });
  await ok(id, 'cardinality_check', { ...T, target: 'survived' });
  assert.match((await ok(id, 'feature_skewness_checker', { ...T, target: 'survived' })).text, 'fare');
  assert.match((await ok(id, 'duplicate_row_detector', { ...T, ignore: ['id'] })).text, /^0 duplicate rows/);
  // The held-out half each: 150 test rows, 150 public validation rows.
  assert.match(
    (await ok(id, 'detect_train_test_overlap', { train: 'public/train.csv', test: 'public/test.csv', ignore: ['id'] }))
      .text,
    /^0 of 150 rows/,
  );
  assert.match(
    (await ok(id, 'detect_train_test_overlap', { train: 'public/train.csv', test: 'public/valid.csv', ignore: ['id'] }))
      .text,
    /^0 of 150 rows/,
  );
  await ok(id, 'encoding_strategy_advisor', { ...T, target: 'survived' });
  await ok(id, 'feature_interaction_detector', { ...T, target: 'survived' });
});

test('time series: every tool reads the first numeric channel of train.csv unasked', async () => {
  const id = 'time_series-train-01';
  const T = { path: 'public/train.csv' };
  for (const name of [
    'zscore_anomaly_detector',
    'iqr_anomaly_detector',
    'moving_window_anomaly_detector',
    'trend_detection',
    'plateau_detector',
    'convergence_estimator',
    'change_point_detection',
    'spike_detector',
    'volatility_analysis',
    'acf',
    'pacf',
    'stationarity_test_adf',
  ])
    await ok(id, name, T);
  assert.match((await ok(id, 'nan_inf_health_detector', T)).text, 'healthy');
  assert.match((await ok(id, 'seasonality_detector', T)).text, /dominant period 2[34]\./);
  await ok(id, 'granger_causality_test', { ...T, cause: 'hufl', effect: 'oil_temp' });
});

test('nlp: the text field is found under pandas string dtypes; token counts name their approximation', async () => {
  const id = 'nlp-train-01';
  const T = { path: 'public/train.csv' };
  for (const name of [
    'repetition_detector',
    'toxicity_noise_filter',
    'language_consistency_checker',
    'response_quality_scorer',
    'topic_distribution_analyzer',
    'difficulty_distribution_estimator',
    'perplexity_outlier_detector',
    'generation_diversity_checker',
    'safety_content_detector',
    'refusal_pattern_analyzer',
  ])
    await ok(id, name, T);
  assert.match((await ok(id, 'repetition_detector', T)).text, '700 texts in text: 0 exact duplicates');
  assert.is((await ok(id, 'toxicity_noise_filter', T)).evidence.flagged, 0);
  assert.is((await ok(id, 'safety_content_detector', T)).evidence.flagged, 0);
  assert.is((await ok(id, 'refusal_pattern_analyzer', T)).evidence.over_refusal, false);
  assert.is((await ok(id, 'generation_diversity_checker', T)).evidence.collapse, false);
  assert.match(
    String((await ok(id, 'perplexity_outlier_detector', { ...T, model: 'gpt2' })).evidence.model),
    'model argument (gpt2) is not used',
  );
  const len = await ok(id, 'token_length_distribution', { ...T, max_length: 128 });
  assert.match(String(len.evidence.unit), 'approximation: words');
  assert.is(len.evidence.truncated, 0);
  // The fault of nlp-train-02 keeps 12 words of texts that are about 65 long.
  assert.is((await ok('nlp-train-02', 'token_length_distribution', { ...T, max_length: 12 })).evidence.truncated, 700);
  assert.is((await ok(id, 'prompt_template_validator', { ...T, markers: ['Review:'] })).evidence.compliance, 0);
  await inapplicable(id, 'instruction_response_coherence', {
    ...T,
    instruction_field: 'instruction',
    response_field: 'response',
  });
  await inapplicable(id, 'vocabulary_coverage_checker', { ...T, vocab: 'public/vocab.txt' });
  await inapplicable(id, 'data_source_mixing_analyzer', { ...T, source_field: 'source' });
  await inapplicable(id, 'reward_distribution_analyzer', T);
  await inapplicable(id, 'kl_reference_divergence_estimator', {
    ...T,
    logprob_field: 'text',
    ref_logprob_field: 'text',
  });
});

test('vision: hand-written standardization counts as normalization; the image folder is healthy', async () => {
  const id = 'cv-train-05';
  assert.equal((await ok(id, 'augmentation_auditor', { path: 'public/train.py' })).evidence.notes, []);
  assert.match(
    (await ok('cv-train-02', 'augmentation_auditor', { path: 'public/train.py' })).text,
    'inputs are not standardized',
  );
  assert.match(
    (await ok(id, 'class_balance_check', { path: 'public/train.csv', label_column: 'label' })).text,
    /^20 classes/,
  );
  assert.match((await ok(id, 'image_normalization_stats', { path: 'public/images' })).text, 'divide by 255');
  assert.is((await ok(id, 'image_shape_consistency', { path: 'public/images' })).evidence.mismatches, 0);
  assert.is((await ok(id, 'duplicate_image_detector', { path: 'public/images' })).evidence.exact_duplicates, 0);
  assert.is((await ok(id, 'corrupt_image_detector', { path: 'public/images' })).evidence.corrupt, 0);
  assert.is(
    (await ok(id, 'train_test_distribution_shift', { train: 'public/images', test: 'public/images' })).evidence.shifted,
    false,
  );
  assert.is(
    (
      await ok(id, 'per_class_accuracy_breakdown', {
        predictions: 'public/sample_submission.csv',
        labels: 'public/sample_submission.csv',
      })
    ).evidence.accuracy,
    1,
  );
});

test('graph: labels and features by node id, the id column no feature, the hidden test split no missing classes', async () => {
  const h = await ok('graph-id-01', 'homophily_estimator', {
    edges: 'public/edges.csv',
    labels: 'public/train_labels.csv',
  });
  assert.ok(Math.abs((h.evidence.edge_homophily as number) - 0.839) < 0.001, h.text);
  const f = await ok('graph-id-01', 'node_feature_health', { features: 'public/nodes.csv' });
  assert.equal([f.evidence.shape, f.evidence.id_column], [[700, 24], 'node']);
  // The faulty starter leaves these features unscaled: the answer says to standardize.
  assert.match(String(f.evidence.suggestion), 'standardize');
  const id = 'graph-train-01';
  const E = { edges: 'public/edges.csv' };
  // Transductive: every node is in nodes.csv; half the labelled ones fit, a quarter validate, a quarter test.
  const size = await ok(id, 'graph_size_summary', {
    ...E,
    features: 'public/nodes.csv',
    train_idx: 'public/train_labels.csv',
    val_idx: 'public/valid_nodes.csv',
    test_idx: 'public/test_nodes.csv',
  });
  assert.equal(
    [size.evidence.nodes, size.evidence.feature_dim, size.evidence.splits],
    [700, 24, { train: 350, val: 175, test: 175 }],
  );
  await ok(id, 'degree_distribution', E);
  assert.match((await ok(id, 'node_label_balance', { labels: 'public/train_labels.csv' })).text, /^7 classes over 350/);
  await ok(id, 'node_feature_health', { features: 'public/nodes.csv' });
  assert.ok(((await ok(id, 'connectivity_components', E)).evidence.largest_fraction as number) > 0.9);
  assert.is((await ok(id, 'self_loop_duplicate_edge_detector', E)).evidence.self_loops, 0);
  assert.ok(
    ((await ok(id, 'homophily_estimator', { ...E, labels: 'public/train_labels.csv' })).evidence
      .edge_homophily as number) > 0.7,
  );
  const split = await ok(id, 'split_integrity_check', {
    train_idx: 'public/train_labels.csv',
    val_idx: 'public/valid_nodes.csv',
    test_idx: 'public/test_nodes.csv',
    labels: 'public/train_labels.csv',
  });
  assert.is(split.evidence.ok, true, split.text);
  assert.equal(split.evidence.overlaps, {});
});

test('every registered tool was called', () => {
  assert.equal(
    listTools()
      .map((t) => t.name)
      .filter((n) => !called.has(n)),
    [],
  );
});

test.after(async () => {
  for (const s of sessions.values()) await s.close();
  await rm(out, { recursive: true, force: true });
});

test.run();
