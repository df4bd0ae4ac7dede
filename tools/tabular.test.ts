// The tabular tools in a warm bwrap jail on the agent environment, on data built with known answers.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { toolSession } from '../test/tools-data.js';

type Row = Record<string, unknown>;
const box = await toolSession();
test.after(() => box.close());
const byColumn = (rows: unknown) => Object.fromEntries((rows as Row[]).map((r) => [r.column, r]));

test('detect_missing_values: the column with 30% missing, and only it', async () => {
  const a = await box.call('detect_missing_values', { path: 'public/train.csv' });
  const cols = a.evidence.columns as Row[];
  assert.equal(
    cols.map((c) => c.column),
    ['a'],
  );
  assert.equal([cols[0].missing, cols[0].fraction], [120, 0.3]);
  assert.match(String(cols[0].suggestion), 'indicator');
  assert.match(a.text, 'a: 30.0%');
});

test('identify_feature_types: id is ID-like, cat and color categorical, label binary', async () => {
  const cols = byColumn((await box.call('identify_feature_types', { path: 'public/train.csv' })).evidence.columns);
  assert.is(cols.id.id_like, true);
  assert.is(cols.b.id_like, false);
  assert.equal(
    [cols.cat.type, cols.color.type, cols.label.type, cols.b.type],
    ['categorical', 'categorical', 'binary', 'numeric'],
  );
  assert.is(cols.cat.unique, 30);
  const low = byColumn(
    (await box.call('identify_feature_types', { path: 'public/train.csv', high_cardinality: 20 })).evidence.columns,
  );
  assert.is(low.cat.high_cardinality, true);
  assert.is(low.color.high_cardinality, false);
});

test('detect_label_imbalance: 9:1', async () => {
  const a = await box.call('detect_label_imbalance', { path: 'public/train.csv', target: 'label' });
  assert.is(a.evidence.imbalance_ratio, 9);
  assert.equal(
    (a.evidence.classes as Row[]).map((c) => [c.label, c.count]),
    [
      ['0', 360],
      ['1', 40],
    ],
  );
  assert.match(String(a.evidence.suggestion), 'resampling');
});

test('check_feature_normalization: scales 1 and 1000 call for standardizing', async () => {
  const a = await box.call('check_feature_normalization', { path: 'public/train.csv', target: 'label' });
  assert.ok((a.evidence.std_ratio as number) > 100);
  assert.match(String(a.evidence.suggestion), 'standardize');
  const cols = byColumn(a.evidence.columns);
  assert.ok(Math.abs((cols.a.mean as number) - 0) < 0.3 && Math.abs((cols.a.std as number) - 1) < 0.2);
});

test('detect_outliers: the five planted values in b lie above the upper bound', async () => {
  const b = byColumn(
    (await box.call('detect_outliers', { path: 'public/train.csv', target: 'label' })).evidence.columns,
  ).b;
  assert.ok((b.outliers as number) >= 5 && (b.outliers as number) <= 8, `b: ${b.outliers}`);
  assert.ok((b.upper as number) < 2000 && (b.upper as number) > 1000);
});

test('correlation_analysis: the b~c pair and the leaky feature', async () => {
  const a = await box.call('correlation_analysis', { path: 'public/train.csv', target: 'label' });
  assert.equal(
    (a.evidence.pairs as Row[]).map((p) => [p.a, p.b]),
    [['b', 'c']],
  );
  assert.equal(
    (a.evidence.leakage_suspects as Row[]).map((l) => l.column),
    ['leak'],
  );
  assert.match(a.text, 'possible target leakage: leak');
});

test('cardinality_check and encoding_strategy_advisor: one-hot for 3 values, target encoding for 30, id dropped', async () => {
  const card = byColumn(
    (await box.call('cardinality_check', { path: 'public/train.csv', target: 'label' })).evidence.columns,
  );
  assert.equal([card.cat.unique, card.color.unique], [30, 3]);
  assert.is(card.color.suggested_encoding, 'one-hot');
  assert.match(String(card.cat.suggested_encoding), 'target encoding');
  const adv = byColumn(
    (await box.call('encoding_strategy_advisor', { path: 'public/train.csv', target: 'label' })).evidence.columns,
  );
  assert.match(String(adv.id.recommendation), 'ID-like');
  assert.is(adv.color.recommendation, 'one-hot');
  assert.match(String(adv.a.recommendation), 'keep numeric');
});

test('feature_skewness_checker: the lognormal column gets log1p, the symmetric one nothing', async () => {
  const cols = byColumn(
    (await box.call('feature_skewness_checker', { path: 'public/train.csv', target: 'label' })).evidence.columns,
  );
  assert.ok((cols.skewed.skewness as number) > 2);
  assert.is(cols.skewed.suggestion, 'log1p');
  assert.is(cols.a.suggestion, 'none');
});

test('duplicate_row_detector: 15 copies among 115 rows', async () => {
  const a = await box.call('duplicate_row_detector', { path: 'public/dups.csv' });
  assert.equal([a.evidence.duplicates, a.evidence.rows], [15, 115]);
  assert.equal(a.evidence.first_duplicate_rows, [100, 101, 102, 103, 104, 105, 106, 107, 108, 109]);
  // Unique ids make every row distinct until the id is ignored.
  assert.is((await box.call('duplicate_row_detector', { path: 'public/train.csv' })).evidence.duplicates, 0);
});

test('detect_train_test_overlap: 25 test rows copied from train, found once ids are ignored', async () => {
  const a = await box.call('detect_train_test_overlap', {
    train: 'public/train.csv',
    test: 'public/test.csv',
    ignore: ['id'],
  });
  assert.equal([a.evidence.overlapping_rows, a.evidence.test_rows], [25, 100]);
  const withId = await box.call('detect_train_test_overlap', { train: 'public/train.csv', test: 'public/test.csv' });
  assert.is(withId.evidence.overlapping_rows, 0);
});

test('feature_interaction_detector: x1*x2 decides the label and ranks first', async () => {
  const a = await box.call('feature_interaction_detector', { path: 'public/inter.csv', target: 'y', top_k: 3 });
  const pairs = a.evidence.pairs as Row[];
  assert.equal([pairs[0].a, pairs[0].b], ['x1', 'x2']);
  assert.ok((pairs[0].gain as number) > 0.3 && (pairs[1].gain as number) < 0.1, JSON.stringify(pairs));
});

test('a long answer is cut for the agent, the evidence keeps every column', async () => {
  const { writeFile } = await import('node:fs/promises');
  const { join } = await import('node:path');
  const cols = Array.from({ length: 100 }, (_, j) => `feature_${j}`);
  const rows = Array.from({ length: 30 }, (_, i) =>
    cols.map((_, j) => (i === 0 ? 1000 + j : (i * 7 + j) % 10)).join(','),
  );
  await writeFile(join(box.session.workspace, 'wide.csv'), `${cols.join(',')}\n${rows.join('\n')}\n`);
  const a = await box.call('detect_outliers', { path: 'wide.csv' });
  assert.match(a.text, /… \(\d+ more characters; the evidence has everything\)$/);
  assert.ok(a.text.length < 2100);
  assert.is((a.evidence.columns as Row[]).filter((c) => (c.outliers as number) > 0).length, 100);
});

test('a missing column is an answer naming it, not a crash', async () => {
  const a = await box.run('detect_label_imbalance', { path: 'public/train.csv', target: 'labl' });
  assert.is(a.ok, false);
  assert.match(a.text, "no column 'labl'");
});

test.run();
