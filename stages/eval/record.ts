// One run's line of results.jsonl: MLE-bench's report fields of its grade, the task's facts where no grade
// says them, and what the trajectory shows (turns, time, how it ended, the tools it called).
import { join } from 'node:path';
import type { Trajectory } from '../../agents/trajectory.js';
import { humanRank } from '../../tasks/leaderboard.js';
import { medalReport } from '../../tasks/medals.js';
import type { RunRecord } from './rows.js';
import { NO_FACTS, type TaskFacts } from './facts.js';
import { slug } from './index.js';

/** Where a run's graded submission is kept, relative to the node's outputs. */
export const keptName = (t: Pick<Trajectory, 'policy' | 'task_id' | 'sample'>) =>
  join('submissions', `${slug(t.policy)}__${t.task_id}__r${t.sample}.csv`);

/** Where the run's grade stands: graded, the submission's fault, the grader's fault, or nothing submitted. */
const gradeStatus = (t: Trajectory): RunRecord['grade_status'] =>
  t.grader_fault ? 'grade_error' : t.evaluation ? 'graded' : t.submission ? 'invalid' : 'no_submission';

/** The report fields of one run; what no grade says comes from the task's own files. */
export function runRecord(t: Trajectory, repeat: number, facts: TaskFacts = NO_FACTS): RunRecord {
  const m = medalReport(t.evaluation);
  const e = t.evaluation;
  return {
    task_id: t.task_id,
    policy: t.policy,
    repeat,
    ...m,
    is_lower_better: m.is_lower_better ?? facts.is_lower_better,
    gold_threshold: e ? e.gold_threshold : facts.gold_threshold,
    silver_threshold: e ? e.silver_threshold : facts.silver_threshold,
    bronze_threshold: e ? e.bronze_threshold : facts.bronze_threshold,
    median_threshold: e ? e.median_threshold : facts.median_threshold,
    created_at: new Date(Date.parse(t.started) + t.duration_ms).toISOString(),
    human_rank: facts.leaderboard
      ? humanRank(m.score, facts.leaderboard.scores, facts.leaderboard.is_lower_better)
      : null,
    success: t.starter_score === null ? null : t.variables.success === 1,
    turns: t.turns.length,
    duration_s: Number((t.duration_ms / 1000).toFixed(3)),
    ended: t.ended,
    format: t.variables.format,
    reward: t.reward,
    submission: t.submission,
    kept_submission: t.submission ? keptName(t) : null,
    grade_error: t.grade_error,
    grade_status: gradeStatus(t),
    grader_fault: t.grader_fault ?? null,
    step_seconds: t.turns
      .filter((x) => x.action === 'code' && x.exit_code !== null)
      .map((x) => Number((x.duration_ms / 1000).toFixed(4))),
    ...(t.scaffold === 'mlab'
      ? { tools_called: t.turns.filter((x) => x.action === 'tool' && x.name).map((x) => x.name!) }
      : {}),
  };
}
