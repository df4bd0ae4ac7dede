// Medals the MLE-bench way, and the milestone indicators rewards use (docs/tasks.md).
// Reports: medals inclusive (>= / <= the threshold), mutually exclusive (the
// best one reached), above-median strictly better than the median threshold.
// Rewards: cumulative indicators (gold implies silver implies bronze implies median),
// every one inclusive, the median too.
import type { EvaluatorResult } from '../sandbox/evaluate.js';

export interface MedalReport {
  valid_submission: boolean;
  score: number | null;
  above_median: boolean;
  gold_medal: boolean;
  silver_medal: boolean;
  bronze_medal: boolean;
  any_medal: boolean;
  is_lower_better: boolean | null;
}

// A null threshold is a milestone the task lacks: never reached.
const reaches = (score: number, threshold: number | null, lower: boolean) =>
  threshold !== null && (lower ? score <= threshold : score >= threshold);
const beats = (score: number, threshold: number | null, lower: boolean) =>
  threshold !== null && (lower ? score < threshold : score > threshold);

/** The MLE-bench report fields for one graded submission (null when nothing valid was submitted). */
export function medalReport(r: EvaluatorResult | null): MedalReport {
  // Any score is a valid submission, as in MLE-bench: infinity reaches what it compares past, NaN nothing.
  if (!r || typeof r.score !== 'number') {
    return {
      valid_submission: false,
      score: null,
      above_median: false,
      gold_medal: false,
      silver_medal: false,
      bronze_medal: false,
      any_medal: false,
      is_lower_better: r?.is_lower_better ?? null,
    };
  }
  const lower = r.is_lower_better;
  const gold = reaches(r.score, r.gold_threshold, lower);
  const silver = !gold && reaches(r.score, r.silver_threshold, lower);
  const bronze = !gold && !silver && reaches(r.score, r.bronze_threshold, lower);
  const aboveMedian = beats(r.score, r.median_threshold, lower);
  return {
    valid_submission: true,
    score: r.score,
    above_median: aboveMedian,
    gold_medal: gold,
    silver_medal: silver,
    bronze_medal: bronze,
    any_medal: gold || silver || bronze,
    is_lower_better: lower,
  };
}

/** Reward variables median/bronze/silver/gold: cumulative, so a gold also counts as silver, bronze and median. */
export function milestones(r: EvaluatorResult | null): {
  execute: number;
  median: number;
  bronze: number;
  silver: number;
  gold: number;
} {
  // As the report counts it (MLE-bench): any score is a valid submission, and infinity reaches what it compares
  // past while NaN reaches nothing (every comparison with NaN is false, in Python as here).
  if (!r || typeof r.score !== 'number') return { execute: 0, median: 0, bronze: 0, silver: 0, gold: 0 };
  const lower = r.is_lower_better;
  const gold = reaches(r.score, r.gold_threshold, lower);
  const silver = gold || reaches(r.score, r.silver_threshold, lower);
  const bronze = silver || reaches(r.score, r.bronze_threshold, lower);
  // The paper's and the release's milestone fires when the score meets or beats the median;
  // the report's above_median stays strict, as MLE-bench's is.
  const median = bronze || reaches(r.score, r.median_threshold, lower);
  return { execute: 1, median: Number(median), bronze: Number(bronze), silver: Number(silver), gold: Number(gold) };
}
