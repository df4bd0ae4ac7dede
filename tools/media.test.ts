// The NLP, vision and graph tools in a warm bwrap jail, on data built with known answers (test/tools-media.ts).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { toolSession } from '../test/tools-data.js';

type Row = Record<string, unknown>;
const box = await toolSession(true);
test.after(() => box.close());
const T = (extra: Record<string, unknown> = {}) => ({ path: 'public/texts.jsonl', field: 'response', ...extra });
const G = 'public/graph/';

test('repetition_detector: three exact copies and one near copy', async () => {
  const a = await box.call('repetition_detector', T());
  assert.equal([a.evidence.exact_duplicates, a.evidence.near_duplicate_rows], [3, 1]);
  assert.equal(
    (a.evidence.examples as Row[]).map((p) => [p.a, p.b]),
    [[1, 33]],
  );
});

test('toxicity_noise_filter, response_quality_scorer: the markup and the blank response', async () => {
  const a = await box.call('toxicity_noise_filter', T());
  assert.equal(
    (a.evidence.examples as Row[]).map((r) => [r.index, r.flags]),
    [
      [36, ['markup']],
      [37, ['blank']],
    ],
  );
  const q = await box.call('response_quality_scorer', T());
  assert.is((q.evidence.issue_counts as Row).empty, 1);
});

test('language_consistency_checker: English dominant, the French text found', async () => {
  const a = await box.call('language_consistency_checker', T());
  assert.is(a.evidence.dominant, 'en');
  assert.is((a.evidence.proportions as Row).fr, 0.025);
  assert.ok((a.evidence.other_language_rows as number[]).includes(38));
});

test('instruction_response_coherence: topic pairs overlap, unrelated pairs do not', async () => {
  const a = await box.call('instruction_response_coherence', {
    path: 'public/texts.jsonl',
    instruction_field: 'instruction',
    response_field: 'response',
  });
  const low = a.evidence.low_rows as number[];
  for (const i of [34, 36, 37, 38]) assert.ok(low.includes(i), `row ${i} is unrelated to its instruction`);
  assert.ok(!low.some((i) => i < 30), 'the topic responses share words with their instructions');
});

test('token_length_distribution: word counts, truncation, and a tokenizer that cannot be used here', async () => {
  const a = await box.call('token_length_distribution', T({ max_length: 20 }));
  assert.is(a.evidence.max, 32);
  assert.ok((a.evidence.truncated as number) >= 30);
  const tok = await box.call('token_length_distribution', T({ tokenizer: 'public/tokenizer.json' }));
  assert.match(String(tok.evidence.unit), 'not installed');
});

test('vocabulary_coverage_checker: the refusal, markup and French words are unknown', async () => {
  const a = await box.call('vocabulary_coverage_checker', T({ vocab: 'public/vocab.txt' }));
  const unknown = (a.evidence.top_unknown as Row[]).map((u) => u.word);
  for (const w of ['cannot', 'div', 'dans']) assert.ok(unknown.includes(w), w);
  assert.ok(!unknown.includes('the'));
});

test('prompt_template_validator: 36 of 40 follow the template', async () => {
  const a = await box.call('prompt_template_validator', {
    path: 'public/texts.jsonl',
    field: 'prompt',
    markers: ['### Instruction:', '### Response:'],
  });
  assert.is(a.evidence.compliance, 0.9);
  assert.equal(a.evidence.non_compliant_rows, [9, 19, 29, 39]);
});

test('topic_distribution_analyzer: three clusters, one per topic', async () => {
  const a = await box.call('topic_distribution_analyzer', T({ k: 3 }));
  const topics = (a.evidence.topics as Row[]).map((t) => (t.top_terms as string[]).slice(0, 3));
  const groups = [
    ['bake', 'flour', 'oven', 'butter', 'sugar', 'dough', 'recipe', 'knead', 'yeast', 'bread'],
    ['telescope', 'galaxy', 'orbit', 'planet', 'nebula', 'comet', 'stellar', 'moon', 'eclipse', 'star'],
    ['interest', 'loan', 'budget', 'savings', 'investment', 'bond', 'dividend', 'stock', 'portfolio', 'inflation'],
  ];
  const which = topics.map((terms) => groups.findIndex((g) => terms.every((t) => g.includes(t))));
  assert.equal([...which].sort(), [0, 1, 2], JSON.stringify(topics));
});

test('difficulty, source mix, perplexity', async () => {
  const d = await box.call('difficulty_distribution_estimator', T());
  assert.equal(
    Object.values(d.evidence.tertile_counts as Row).reduce((a, b) => (a as number) + (b as number), 0),
    40,
  );
  const mix = await box.call('data_source_mixing_analyzer', { path: 'public/texts.jsonl', source_field: 'source' });
  assert.equal(
    (mix.evidence.sources as Row[]).map((s) => [s.source, s.share]),
    [
      ['web', 0.8],
      ['books', 0.15],
      ['code', 0.05],
    ],
  );
  assert.match(String(mix.evidence.suggestion), 'web dominates');
  const p = await box.call('perplexity_outlier_detector', T({ model: 'gpt2' }));
  assert.equal(p.evidence.high_outliers, [36, 38]);
  assert.match(String(p.evidence.model), 'model argument (gpt2) is not used');
});

test('reward_distribution_analyzer, kl_reference_divergence_estimator: half the groups flat, KL from a 0.5 shift', async () => {
  const r = await box.call('reward_distribution_analyzer', { path: 'public/texts.jsonl', group_field: 'group' });
  assert.equal([r.evidence.groups, r.evidence.zero_variance_group_share, r.evidence.distinct_values], [10, 0.5, 2]);
  const kl = await box.call('kl_reference_divergence_estimator', {
    path: 'public/texts.jsonl',
    logprob_field: 'lp',
    ref_logprob_field: 'ref_lp',
  });
  assert.equal([kl.evidence.k1, kl.evidence.tokens], [0.5, 120]);
  assert.ok(Math.abs((kl.evidence.k3 as number) - (Math.exp(-0.5) - 0.5)) < 1e-5);
});

test('generation_diversity, safety, refusals', async () => {
  const g = await box.call('generation_diversity_checker', T());
  assert.is(g.evidence.repeated_outputs, 3);
  const s = await box.call('safety_content_detector', T({ keywords: ['telescope'] }));
  assert.is((s.evidence.counts as Row)['pii:email'], 1);
  assert.ok(((s.evidence.counts as Row).custom as number) > 0);
  const r = await box.call('refusal_pattern_analyzer', T({ expected_rate: 0.01 }));
  assert.equal([r.evidence.rows, r.evidence.over_refusal], [[34, 35], true]);
});

test('vision: class counts, shapes, duplicates, the corrupt file, normalization and shift', async () => {
  const bal = await box.call('class_balance_check', { path: 'public/images' });
  assert.equal(
    (bal.evidence.classes as Row[]).map((c) => [c.label, c.count]),
    [
      ['cat', 31],
      ['dog', 11],
    ],
  );
  const shape = await box.call('image_shape_consistency', { path: 'public/images' });
  assert.equal(shape.evidence.shapes, { '16x16 RGB': 40, '20x16 RGB': 1, 'NonexNone unreadable': 1 });
  const dup = await box.call('duplicate_image_detector', { path: 'public/images' });
  assert.is(dup.evidence.exact_duplicates, 1);
  const bad = await box.call('corrupt_image_detector', { path: 'public/images' });
  assert.equal(
    (bad.evidence.files as Row[]).map((f) => String(f.file).split('/').pop()),
    ['broken.png'],
  );
  const norm = await box.call('image_normalization_stats', { path: 'public/images' });
  assert.ok(
    (norm.evidence.max as number[]).every((m) => m <= 119) &&
      (norm.evidence.mean_01 as number[]).every((m) => Math.abs(m - 59.5 / 255) < 0.02),
  );
  const shift = await box.call('train_test_distribution_shift', { train: 'public/images', test: 'public/test_images' });
  assert.is(shift.evidence.shifted, true);
  const aug = await box.call('augmentation_auditor', { path: 'public/train_vision.py' });
  assert.equal(
    [aug.evidence.augmentations, aug.evidence.suggested],
    [['RandomHorizontalFlip'], ['RandomCrop', 'ColorJitter']],
  );
  const acc = await box.call('per_class_accuracy_breakdown', {
    predictions: 'public/val_preds.csv',
    labels: 'public/val_labels.csv',
  });
  assert.equal(
    (acc.evidence.per_class as Row[]).map((c) => [c.label, c.accuracy]),
    [
      ['a', 1],
      ['b', 0.5],
    ],
  );
  assert.equal((acc.evidence.confusions as Row[])[0], { true: 'b', predicted: 'a', count: 5 });
});

test('graph: size, degrees, components, loops, homophily, features, labels and splits', async () => {
  const size = await box.call('graph_size_summary', {
    edges: `${G}edges.csv`,
    features: `${G}features.csv`,
    train_idx: `${G}train.txt`,
  });
  assert.equal([size.evidence.nodes, size.evidence.undirected_pairs, size.evidence.feature_dim], [25, 90, 4]);
  const deg = await box.call('degree_distribution', { edges: `${G}edges.csv`, num_nodes: 25 });
  assert.equal([deg.evidence.isolated, deg.evidence.median], [5, 9]);
  const cc = await box.call('connectivity_components', { edges: `${G}edges.csv`, num_nodes: 25 });
  assert.equal([cc.evidence.components, cc.evidence.largest_fraction], [7, 0.4]);
  const loops = await box.call('self_loop_duplicate_edge_detector', { edges: `${G}edges.csv` });
  assert.equal([loops.evidence.self_loops, loops.evidence.duplicate_edges, loops.evidence.reverse_coverage], [1, 1, 0]);
  const h = await box.call('homophily_estimator', { edges: `${G}edges.csv`, labels: `${G}labels.csv` });
  assert.is(h.evidence.edge_homophily, 1);
  const f = await box.call('node_feature_health', { features: `${G}features.csv` });
  assert.equal([f.evidence.non_finite, f.evidence.zero_rows, f.evidence.constant_columns], [1, 2, [2]]);
  const lb = await box.call('node_label_balance', { labels: `${G}labels.csv`, train_idx: `${G}train.txt` });
  assert.equal(
    (lb.evidence.classes as Row[]).map((c) => [c.label, c.count]),
    [
      ['0', 10],
      ['1', 5],
    ],
  );
  const split = await box.call('split_integrity_check', {
    train_idx: `${G}train.txt`,
    val_idx: `${G}val.txt`,
    test_idx: `${G}test.txt`,
    labels: `${G}labels.csv`,
  });
  assert.equal(split.evidence.overlaps, { 'train/val': 1 });
  assert.equal((split.evidence.class_coverage as Record<string, Row>).test.missing, ['0', '1']);
});

test.run();
