// A generated task's leaderboard (docs/tasks.md#synthetic-leaderboards): the
// reference teams' submissions, written by generate_task_env.py, are graded
// by the task's own evaluator on the hidden answers and ranked into
// private/leaderboard.csv; the thresholds then come from that file by
// MLE-bench's rule, through the same code as a real competition's.
import { readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { assetPath } from '../core/assets.js';
import { evaluatorView } from '../sandbox/evaluate.js';
import { runTrusted } from '../sandbox/grader.js';
import {
  leaderboardScores,
  leaderboardThresholds,
  writeTaskLeaderboard,
  type LeaderboardThresholds,
} from './leaderboard.js';

export interface TeamScore {
  team: string;
  score: number;
}

/** Ranks teams best first (ties by name, so the file is the same on every run) as leaderboard.csv text. */
export function leaderboardCsv(teams: readonly TeamScore[], lowerIsBetter: boolean): string {
  const ranked = [...teams].sort(
    (a, b) =>
      (lowerIsBetter ? a.score - b.score : b.score - a.score) || (a.team < b.team ? -1 : a.team > b.team ? 1 : 0),
  );
  return ['rank,teamName,score', ...ranked.map((t, i) => `${i + 1},${t.team},${t.score}`)].join('\n') + '\n';
}

/** Thresholds as threshold.json holds them (rounded as the evaluator rounds scores). */
export function thresholdJson(
  th: Pick<LeaderboardThresholds, 'gold_threshold' | 'silver_threshold' | 'bronze_threshold' | 'median_threshold'>,
): string {
  const r = (x: number) => Math.round(x * 1e6) / 1e6;
  const out = {
    bronze_threshold: r(th.bronze_threshold),
    gold_threshold: r(th.gold_threshold),
    median_threshold: r(th.median_threshold),
    silver_threshold: r(th.silver_threshold),
  };
  return JSON.stringify(out, null, 2) + '\n';
}

/** What threshold.json holds while a task's evaluator is written and checked, before its leaderboard exists. */
export const PROVISIONAL_THRESHOLDS = thresholdJson({
  gold_threshold: 0,
  silver_threshold: 0,
  bronze_threshold: 0,
  median_threshold: 0,
});

export type LeaderboardResult =
  { ok: true; teams: number; thresholds: LeaderboardThresholds } | { ok: false; error: string };

/**
 * Grades the teams in `teamsDir` with `task`'s evaluator, writes
 * private/leaderboard.csv, private/leaderboard.json (for HumanRank) and
 * private/threshold.json. A reference team the evaluator refuses is a fault
 * of the generator, so it fails the task rather than leaving a gap.
 */
export async function freezeLeaderboard(
  task: string,
  teamsDir: string,
  python: string,
  lowerIsBetter: boolean,
): Promise<LeaderboardResult> {
  const taskDir = resolve(task);
  const view = await evaluatorView(taskDir);
  const r = await runTrusted(
    python,
    assetPath('tasks/py/leaderboard_score.py'),
    [join(taskDir, 'private', 'evaluator.py'), resolve(teamsDir)],
    { cwd: view.dir, timeoutMs: 300_000 },
  ).finally(view.close);
  const last = String(r.stdout).trim().split('\n').pop() ?? '';
  let graded: { teams: ({ team: string; score: number } | { team: string; error: string })[] } | undefined;
  try {
    // The script's last line is its answer; a script that failed has none.
    if (r.exitCode === 0) graded = JSON.parse(last) as typeof graded;
  } catch {
    graded = undefined;
  }
  if (!graded) {
    return {
      ok: false,
      error: `grading the reference teams failed (exit ${r.exitCode}): ${String(r.stderr).trim().split('\n').slice(-3).join(' | ')}`,
    };
  }
  const refused = graded.teams.find((t) => 'error' in t);
  if (refused && 'error' in refused)
    return { ok: false, error: `the evaluator refused reference team ${refused.team}: ${refused.error}` };
  const teams = graded.teams as TeamScore[];
  if (teams.length < 2)
    return { ok: false, error: `the leaderboard needs at least two reference teams (got ${teams.length})` };
  const csvPath = join(taskDir, 'private', 'leaderboard.csv');
  await writeFile(csvPath, leaderboardCsv(teams, lowerIsBetter));
  // Read back: the thresholds come from the file, as a real competition's do.
  const scores = leaderboardScores(await readFile(csvPath, 'utf8'), csvPath);
  const th = leaderboardThresholds(scores);
  // The file's order says the direction; only an all-equal board leaves it open (and fails the sanity rule).
  th.is_lower_better = lowerIsBetter;
  await writeTaskLeaderboard(taskDir, { is_lower_better: lowerIsBetter, scores });
  await writeFile(join(taskDir, 'private', 'threshold.json'), thresholdJson(th));
  return { ok: true, teams: teams.length, thresholds: th };
}
