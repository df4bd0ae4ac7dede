import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { bootstrapCi, mean, sem, winRate } from '../core/stats.js';
import { medalReport, milestones } from './medals.js';

const th = {
  gold_threshold: 0.9,
  silver_threshold: 0.8,
  bronze_threshold: 0.7,
  median_threshold: 0.5,
  is_lower_better: false,
};
const at = (score: number, lower = false) =>
  lower
    ? { score, gold_threshold: 1, silver_threshold: 2, bronze_threshold: 3, median_threshold: 5, is_lower_better: true }
    : { ...th, score };

test('MLE-bench medals: inclusive thresholds, mutually exclusive, above-median strict', () => {
  assert.equal(medalReport(at(0.9)), {
    valid_submission: true,
    score: 0.9,
    above_median: true,
    gold_medal: true,
    silver_medal: false,
    bronze_medal: false,
    any_medal: true,
    is_lower_better: false,
  });
  assert.is(medalReport(at(0.8)).silver_medal, true);
  assert.is(medalReport(at(0.8)).gold_medal, false);
  assert.is(medalReport(at(0.7)).bronze_medal, true);
  assert.is(medalReport(at(0.69)).any_medal, false);
  assert.is(medalReport(at(0.5)).above_median, false, 'strictly above the median');
  assert.is(medalReport(at(0.51)).above_median, true);
  assert.is(medalReport(at(1, true)).gold_medal, true, 'lower is better: inclusive');
  assert.is(medalReport(at(2.5, true)).bronze_medal, true);
  assert.is(medalReport(at(5, true)).above_median, false);
  assert.equal(medalReport(null).valid_submission, false);
});

test('reward milestones are cumulative and inclusive; a null threshold is never reached', () => {
  assert.equal(milestones(at(0.95)), { execute: 1, median: 1, bronze: 1, silver: 1, gold: 1 });
  assert.equal(milestones(at(0.75)), { execute: 1, median: 1, bronze: 1, silver: 0, gold: 0 });
  assert.equal(milestones(at(0.6)), { execute: 1, median: 1, bronze: 0, silver: 0, gold: 0 });
  assert.equal(milestones(at(0.5)), { execute: 1, median: 1, bronze: 0, silver: 0, gold: 0 }, 'meets the median');
  assert.equal(milestones(at(0.49)), { execute: 1, median: 0, bronze: 0, silver: 0, gold: 0 });
  assert.equal(
    milestones(at(5, true)),
    { execute: 1, median: 1, bronze: 0, silver: 0, gold: 0 },
    'lower is better: meets the median',
  );
  assert.equal(milestones(at(5.01, true)).median, 0);
  assert.equal(milestones({ ...at(0.95), gold_threshold: null }), {
    execute: 1,
    median: 1,
    bronze: 1,
    silver: 1,
    gold: 0,
  });
  assert.equal(medalReport({ ...at(0.95), gold_threshold: null, median_threshold: null }), {
    valid_submission: true,
    score: 0.95,
    above_median: false,
    gold_medal: false,
    silver_medal: true,
    bronze_medal: false,
    any_medal: true,
    is_lower_better: false,
  });
  assert.equal(milestones(null), { execute: 0, median: 0, bronze: 0, silver: 0, gold: 0 });
});

test('a score that is not finite is a valid submission, as in MLE-bench; the reward milestones place it the same way', () => {
  // Higher is better: infinity reaches every threshold; lower is better: it reaches none. NaN reaches nothing.
  assert.equal(
    [
      medalReport(at(Infinity)).valid_submission,
      medalReport(at(Infinity)).gold_medal,
      medalReport(at(Infinity)).above_median,
    ],
    [true, true, true],
  );
  assert.equal(
    [
      medalReport(at(Infinity, true)).valid_submission,
      medalReport(at(Infinity, true)).any_medal,
      medalReport(at(-Infinity, true)).gold_medal,
    ],
    [true, false, true],
  );
  const nan = medalReport(at(NaN));
  assert.equal([nan.valid_submission, nan.any_medal, nan.above_median], [true, false, false]);
  // The reward's milestones read it as the report does (MLE-bench's comparisons, Python's for NaN): infinity
  // reaches every milestone when higher is better and none when lower is better; NaN is executed, nothing more.
  assert.equal(milestones(at(Infinity)), { execute: 1, median: 1, bronze: 1, silver: 1, gold: 1 });
  assert.equal(milestones(at(Infinity, true)), { execute: 1, median: 0, bronze: 0, silver: 0, gold: 0 });
  assert.equal(milestones(at(-Infinity, true)), { execute: 1, median: 1, bronze: 1, silver: 1, gold: 1 });
  assert.equal(milestones(at(NaN)), { execute: 1, median: 0, bronze: 0, silver: 0, gold: 0 });
});

test('mean and SEM on known values', () => {
  assert.is(mean([1, 2, 3, 4]), 2.5);
  // sample sd of 1..4 = sqrt(5/3); SEM = sqrt(5/3)/2
  assert.ok(Math.abs(sem([1, 2, 3, 4]) - Math.sqrt(5 / 3) / 2) < 1e-12);
  assert.is(sem([7]), 0);
});

test('bootstrap intervals: degenerate data, coverage of a known mean, reproducibility', () => {
  assert.equal(bootstrapCi([0.3, 0.3, 0.3]), [0.3, 0.3]);
  const xs = Array.from({ length: 200 }, (_, i) => (i % 4 === 0 ? 1 : 0)); // mean 0.25, sd ~0.433
  const [lo, hi] = bootstrapCi(xs, { seed: 1 });
  // Normal approximation: 0.25 ± 1.96 * 0.433 / sqrt(200) = 0.25 ± 0.06
  assert.ok(lo > 0.17 && lo < 0.21, `lo ${lo}`);
  assert.ok(hi > 0.29 && hi < 0.33, `hi ${hi}`);
  assert.equal(bootstrapCi(xs, { seed: 1 }), [lo, hi]);
});

test('pairwise win rate on shared tasks, ties half', () => {
  const a = new Map([
    ['t1', 0.9],
    ['t2', 0.5],
    ['t3', 3],
    ['only-a', 1],
  ]);
  const b = new Map([
    ['t1', 0.8],
    ['t2', 0.5],
    ['t3', 2],
  ]);
  const r = winRate(a, b, (t) => t === 't3');
  assert.equal(r, { rate: (1 + 0.5 + 0) / 3, tasks: 3 });
});

test.run();
