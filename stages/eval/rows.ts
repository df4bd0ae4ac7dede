// The shapes the eval's tables are made from: one run's report fields (a line of results.jsonl) and a table
// row, with the rounding every table uses.
import type { MedalReport } from '../../tasks/medals.js';
import type { MetricValue } from '../contract.js';

/** One run's report fields (MLE-bench's, plus MLToolBench's success and trajectory facts). */
export interface RunRecord extends MedalReport {
  task_id: string;
  policy: string;
  repeat: number;
  gold_threshold: number | null;
  silver_threshold: number | null;
  bronze_threshold: number | null;
  median_threshold: number | null;
  success: boolean | null;
  turns: number;
  duration_s: number;
  ended: string;
  format: number;
  reward: number | null;
  submission: string | null;
  /** The graded file as kept in the node's outputs (relative to them), when there was one. */
  kept_submission?: string | null;
  grade_error: string | null;
  /** graded, invalid (the submission's fault), grade_error (the grader's fault: the node fails) or no_submission. */
  grade_status: 'graded' | 'invalid' | 'grade_error' | 'no_submission';
  /** What the grader raised, for a grade_error. */
  grader_fault: string | null;
  /** When the run was graded (its end). */
  created_at: string;
  /** MLE-Dojo's HumanRank (0–1) against the task's human leaderboard; null when it has none. */
  human_rank: number | null;
  /** Seconds of each code execution. */
  step_seconds: number[];
  /** mlab: the diagnostic tools called, in order (file and script actions left out). */
  tools_called?: string[];
}

export type Row = Record<string, MetricValue>;

/** Rounded to `d` places; not a number (an empty mean) is null. */
export const round = (x: number, d = 4) => (Number.isFinite(x) ? Number(x.toFixed(d)) : null);
