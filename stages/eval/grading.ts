// The grading reports of an eval node: MLE-bench's own, one per policy and field for field, and ours, with
// each run's repeat and what went wrong.
import type { RunRecord } from './rows.js';

const submitted = (r: RunRecord) => r.submission !== null && r.grade_error !== `no ${r.submission} in the workspace`;

/** What both grading reports say of one run, as MLE-bench names and orders it; `threshold` writes each threshold. */
function competition(r: RunRecord, threshold: (x: number | null) => unknown = (x) => x): Record<string, unknown> {
  return {
    competition_id: r.task_id,
    // A grader's infinity or NaN is a valid score in MLE-bench, written as its json.dump writes it (a bare token).
    score: r.score,
    gold_threshold: threshold(r.gold_threshold),
    silver_threshold: threshold(r.silver_threshold),
    bronze_threshold: threshold(r.bronze_threshold),
    median_threshold: threshold(r.median_threshold),
    any_medal: r.any_medal,
    gold_medal: r.gold_medal,
    silver_medal: r.silver_medal,
    bronze_medal: r.bronze_medal,
    above_median: r.above_median,
    submission_exists: submitted(r),
    valid_submission: r.valid_submission,
  };
}

/** The totals both grading reports open with, as MLE-bench names them. */
function totals(runs: readonly RunRecord[]): Record<string, number> {
  const count = (f: (r: RunRecord) => boolean) => runs.filter(f).length;
  return {
    total_runs: runs.length,
    total_runs_with_submissions: count(submitted),
    total_valid_submissions: count((r) => r.valid_submission),
    total_medals: count((r) => r.gold_medal || r.silver_medal || r.bronze_medal),
    total_gold_medals: count((r) => r.gold_medal),
    total_silver_medals: count((r) => r.silver_medal),
    total_bronze_medals: count((r) => r.bronze_medal),
    total_above_median: count((r) => r.above_median),
  };
}

/**
 * One policy's runs as MLE-bench writes its grading report: the same fields,
 * floats and booleans never null, the score null when nothing valid was
 * graded (as MLE-bench's is). A threshold the task lacks is float NaN there,
 * written (with an infinite or NaN score) as the bare token Python's json.dump
 * writes and MLE-bench's reader (json.load, float()) reads back.
 */
export function mlebenchReport(runs: readonly RunRecord[]): Record<string, unknown> {
  const float = (x: number | null) => x ?? NaN;
  return {
    ...totals(runs),
    competition_reports: runs.map((r) => ({
      ...competition(r, float),
      is_lower_better: r.is_lower_better ?? false,
      created_at: r.created_at,
      // The kept copy, relative to the node's outputs: MLE-bench's grader can grade it again.
      submission_path: r.kept_submission ?? r.submission ?? '',
    })),
  };
}

/** Our grading report: MLE-bench's totals and one competition report per run (with its repeat and error), per policy. */
export function gradingReport(runs: readonly RunRecord[], policies: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const p of policies) {
    const rs = runs.filter((r) => r.policy === p);
    out[p] = {
      ...totals(rs),
      competition_reports: rs.map((r) => ({
        ...competition(r),
        repeat: r.repeat,
        is_lower_better: r.is_lower_better,
        submission_path: r.submission,
        status: r.grade_status,
        error: r.grader_fault ?? r.grade_error,
      })),
    };
  }
  return out;
}
