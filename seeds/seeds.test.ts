import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { allSeeds, selectSeeds, SEED_SETS } from './index.js';
import { draftSpec, loadCatalogs } from './strategist.js';

test('at least 60 MLE-bench seeds outside Lite, every file valid, every modality and generator covered', () => {
  const seeds = allSeeds();
  const mle = seeds.filter(SEED_SETS.mlebench);
  assert.ok(mle.length >= 60, `${mle.length}`);
  const lite = [
    'aerial-cactus-identification',
    'spooky-author-identification',
    'tabular-playground-series-dec-2021',
    'leaf-classification',
  ];
  assert.ok(!seeds.some((s) => lite.includes(s.id)), 'no Lite competition');
  for (const m of ['tabular', 'image', 'text', 'audio', 'graph', 'time-series'])
    assert.ok(selectSeeds(`mlebench-${m}`).length > 0, m);
  assert.is(new Set(mle.map((s) => s.generator)).size, 7);
});

test('selection interleaves generators so that any prefix covers every kind', () => {
  const first7 = selectSeeds('mlebench')
    .slice(0, 7)
    .map((s) => s.generator);
  assert.is(new Set(first7).size, 7);
  assert.throws(() => selectSeeds('nope'), /unknown seed set "nope"/);
  assert.throws(() => selectSeeds(['not-a-seed']), /unknown seed/);
  assert.equal(
    selectSeeds('all', ['graph']).map((s) => s.modality),
    ['graph', 'graph'],
  );
});

test('catalogs: 30+ scenarios across the sectors, 5+ mutations per modality', () => {
  const { scenarios, mutations } = loadCatalogs();
  assert.ok(scenarios.length >= 30);
  for (const sector of [
    'healthcare',
    'retail',
    'manufacturing',
    'IT',
    'transportation',
    'finance',
    'energy',
    'agriculture',
  ]) {
    assert.ok(
      scenarios.some((s) => s.sector === sector),
      sector,
    );
  }
  for (const [family, m] of Object.entries(mutations)) assert.ok(Object.keys(m).length >= 5, family);
});

test('the strategist is deterministic and follows the DNA', () => {
  const dna = selectSeeds('mlebench-tabular')[0];
  const a = draftSpec(dna, { seed: 1, index: 3 });
  assert.equal(draftSpec(dna, { seed: 1, index: 3 }), a);
  assert.is.not(draftSpec(dna, { seed: 2, index: 3 }).task_id, a.task_id);
  assert.ok(a.n_train >= 50 && a.n_train <= 200);
  assert.is(a.n_test, Math.max(100, Math.round(a.n_train * 0.5)));
  // The paper's corpus: a test set about a fifth of the training rows (so fewer ids); the rest is the same draw.
  const fifth = draftSpec(dna, { seed: 1, index: 3, testFraction: 0.2 });
  assert.is(fifth.n_test, Math.round(a.n_train * 0.2));
  assert.is(fifth.ids.length, a.ids.length - a.n_test + fifth.n_test);
  assert.equal({ ...fifth, n_test: a.n_test, ids: a.ids }, a);
  assert.is(a.mutations.length, 3);
  assert.is(a.domain.candidates.length, 5);
  assert.is(a.metric, dna.generate_metric);
  assert.is(new Set(a.ids).size, a.ids.length);
  // Full scale: the seed competition's own sample count, capped by memory, never below the micro task's.
  const full = draftSpec(dna, { seed: 1, index: 3, scale: 'full' });
  assert.is(full.n_train, Math.min(dna.dataset_stats.sample_count, 1024 * 1024));
  assert.is(draftSpec(dna, { seed: 1, index: 3, scale: 'full', fullMemoryMb: 1 }).n_train, Math.max(a.n_train, 1024));
  // The same task otherwise.
  for (const k of ['generator', 'metric', 'target', 'mutations', 'domain', 'noise'] as const)
    assert.equal(full[k], a[k], k);
  const narrow = draftSpec(dna, { seed: 1, index: 3, samples: [60, 60] });
  assert.is(narrow.n_train, 60);
});

test.run();
