// A finished rollout as the trajectory record (docs/agents.md) and the reward
// variables its formula reads (docs/experiments.md), computed from what was recorded.
import type { EvaluatorResult } from '../sandbox/evaluate.js';
import { DEFAULT_INPUTS, type RewardInputs } from '../core/rewards/presets.js';
import { milestones } from '../tasks/medals.js';
import { hasNullThreshold, releaseFormatRate } from './reward-inputs.js';
import type { EpisodeResult } from './scaffolds/types.js';

export interface Trajectory extends EpisodeResult {
  task_id: string;
  policy: string;
  /** Rollouts of the same task and policy share a group (GRPO's baseline). */
  group_id: string;
  sample: number;
  /** Guided collection: who wrote the guidance the teacher saw, and its hash (never its text). */
  guidance?: { source: string; sha256: string };
  /** A branch of a saved run (paired observation intervention). */
  branch?: {
    /** The eval stage whose saved run was branched. */
    from: string;
    /** The turn whose return was intervened on; null: no diagnostic return, the saved run kept whole. */
    turn: number | null;
    tool?: string;
    /** Replayed turns whose observation differed from the saved one (0 when the replay rebuilt the state). */
    replay_mismatches?: number;
  };
  evaluation: EvaluatorResult | null;
  grade_error: string | null;
  /** The grader itself failed on the submission (not the submission's fault): what it raised. */
  grader_fault?: string;
  /** The starter baseline's score (MLToolBench's b), when the task records one. */
  starter_score: number | null;
  /** The starter's standard deviation over its seeds, when the task records it (the SFT filter's margin). */
  starter_std?: number | null;
  variables: RewardVariables;
  /** The variables are of a Score tool's grade at that turn (submission: last-scored), not of the final submission's `evaluation`. */
  rewarded?: { submission: 'last-scored'; turn: number };
  reward: number | null;
  started: string;
  duration_ms: number;
}

export type RewardVariables = Record<
  | 'format'
  | 'execute'
  | 'valid'
  | 'median'
  | 'bronze'
  | 'silver'
  | 'gold'
  | 'score'
  | 'improvement'
  | 'success'
  | 'turns'
  | 'reply_chars'
  | 'timed_out',
  number
>;

/**
 * MLToolBench Eq. 5: a run succeeds when its submission is valid, its score
 * finite, and it beats the starter baseline b by more than max(0.1|b|, 0.01)
 * in the metric's direction.
 */
export function success(score: number | null, baseline: number | null, lowerIsBetter: boolean): boolean | null {
  if (baseline === null) return null;
  if (score === null || !Number.isFinite(score)) return false;
  const gain = lowerIsBetter ? baseline - score : score - baseline;
  return gain > Math.max(0.1 * Math.abs(baseline), 0.01);
}

/** The reward variables of an episode; `evaluation` is the rewarded grade (the final submission's, or the last scored one's). */
export function rewardVariables(
  ep: EpisodeResult,
  evaluation: EvaluatorResult | null,
  starter: number | null,
  inputs: RewardInputs = DEFAULT_INPUTS,
): RewardVariables {
  const replies = ep.turns.length;
  const m = inputs.thresholds === 'release' ? releaseMilestones(evaluation) : milestones(evaluation);
  // `score` and `improvement` are the metric itself, and a reward is never infinite or NaN: a score that is not
  // finite reads 0 there (and never succeeds), while the milestones above place it as MLE-bench does.
  const score = evaluation && Number.isFinite(evaluation.score) ? evaluation.score : null;
  const lower = evaluation?.is_lower_better ?? false;
  const last = ep.turns[ep.turns.length - 1];
  return {
    format:
      inputs.format_rule === 'release'
        ? releaseFormatRate(ep.messages, ep.turns)
        : replies
          ? ep.turns.filter((t) => t.format_ok).length / replies
          : 0,
    execute: m.execute,
    valid: m.execute,
    median: m.median,
    bronze: m.bronze,
    silver: m.silver,
    gold: m.gold,
    score: score ?? 0,
    improvement: score !== null && starter !== null ? (lower ? starter - score : score - starter) : 0,
    success: Number(success(score, starter, lower) ?? false),
    turns: replies,
    // Verbosity, for length shaping: the mean characters of the policy's replies.
    reply_chars: replies
      ? ep.messages.filter((m) => m.role === 'assistant').reduce((n, m) => n + m.content.length, 0) / replies
      : 0,
    // The episode ran out of time, or its last execution was killed at τ_max.
    timed_out: Number(ep.ended === 'time_budget' || (last?.action === 'code' && last.timed_out)),
  };
}

/**
 * The release's milestones (`_score_to_reward`): any score counts as executed, and float() comparisons place
 * it, infinity past every threshold in its direction and NaN past none (as mlepipe's milestones do); a null
 * threshold makes the reward fall back to its format part, so nothing else is reached.
 */
function releaseMilestones(r: EvaluatorResult | null): ReturnType<typeof milestones> {
  if (r && hasNullThreshold(r)) return { execute: 0, median: 0, bronze: 0, silver: 0, gold: 0 };
  return milestones(r);
}
