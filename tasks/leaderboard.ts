// MLE-bench's thresholds from a competition's leaderboard (docs/tasks.md#leaderboards):
// the leaderboard's order gives the direction (its first score worse than its
// last means lower is better), the number of teams picks the positions whose
// scores are the medal lines (Kaggle's progression rules), and the median is
// the median of all scores. Scores are compared at 5 decimals, as MLE-bench
// rounds a graded score before ranking it.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { UserError } from '../core/errors.js';
import { isObject, readJson } from '../core/json-files.js';

/**
 * A task's human leaderboard as HumanRank reads it (private/leaderboard.json): the scores in rank order, a
 * missing score NaN (null in the file), and the metric's direction. Written by the MLE-bench importer and the
 * synthetic leaderboard, read by the stages that rank a score against it.
 */
export interface TaskLeaderboard {
  scores: number[];
  is_lower_better: boolean;
}

const leaderboardFile = (taskDir: string) => join(taskDir, 'private', 'leaderboard.json');

export async function writeTaskLeaderboard(taskDir: string, lb: TaskLeaderboard): Promise<void> {
  await writeFile(
    leaderboardFile(taskDir),
    JSON.stringify({ is_lower_better: lb.is_lower_better, scores: lb.scores }) + '\n',
  );
}

/** The task's leaderboard; null for a task without one (or with a damaged one). */
export async function readTaskLeaderboard(taskDir: string): Promise<TaskLeaderboard | null> {
  const lb = await readJson<Record<string, unknown>>(leaderboardFile(taskDir), isObject).catch(() => null);
  if (!lb || !Array.isArray(lb.scores)) return null;
  return {
    scores: lb.scores.map((x) => (typeof x === 'number' ? x : NaN)),
    is_lower_better: lb.is_lower_better === true,
  };
}

export interface LeaderboardThresholds {
  gold_threshold: number;
  silver_threshold: number;
  bronze_threshold: number;
  median_threshold: number;
  is_lower_better: boolean;
  teams: number;
}

/** The leaderboard's scores in its own (rank) order; an empty cell is NaN, as a missing score is. */
export function leaderboardScores(csvText: string, file: string): number[] {
  let rows: Record<string, string>[];
  try {
    rows = parse(csvText, { columns: true, skip_empty_lines: true }) as Record<string, string>[];
  } catch (err) {
    throw new UserError(`${file}: not a CSV file: ${(err as Error).message.split('\n')[0]}`);
  }
  if (!rows.length) throw new UserError(`${file}: the leaderboard has no teams`);
  if (!('score' in rows[0]))
    throw new UserError(`${file}: the leaderboard has no score column (columns: ${Object.keys(rows[0]).join(', ')})`);
  return rows.map((r) => (r.score.trim() === '' ? NaN : Number(r.score)));
}

/** 1-based positions of the gold, silver and bronze lines for a leaderboard of n teams. */
export function medalPositions(n: number): [number, number, number] {
  if (!Number.isInteger(n) || n < 1) throw new UserError(`a leaderboard needs at least one team (got ${n})`);
  const at = (share: number) => Math.max(1, Math.floor(n * share));
  if (n < 100) return [at(0.1), at(0.2), at(0.4)];
  if (n < 250) return [10, at(0.2), at(0.4)];
  if (n < 1000) return [10 + Math.floor(n * 0.002), 50, 100];
  return [10 + Math.floor(n * 0.002), at(0.05), at(0.1)];
}

/** The median of the known scores (the mean of the middle two when their number is even). */
function median(xs: readonly number[]): number {
  const s = xs.filter((x) => !Number.isNaN(x)).sort((a, b) => a - b);
  if (!s.length) return NaN;
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

export function leaderboardThresholds(scores: readonly number[]): LeaderboardThresholds {
  const n = scores.length;
  const [gold, silver, bronze] = medalPositions(n);
  return {
    gold_threshold: scores[gold - 1],
    silver_threshold: scores[silver - 1],
    bronze_threshold: scores[bronze - 1],
    median_threshold: median(scores),
    is_lower_better: scores[0] < scores[n - 1],
    teams: n,
  };
}

/** A score as MLE-bench ranks it: rounded to 5 decimals. */
export const roundScore = (x: number) => Math.round(x * 1e5) / 1e5;

/** A score's place against a leaderboard's thresholds: medals inclusive and exclusive, above-median strict. */
export function rankScore(
  score: number | null,
  th: LeaderboardThresholds,
): { gold_medal: boolean; silver_medal: boolean; bronze_medal: boolean; above_median: boolean } {
  if (score === null || !Number.isFinite(score))
    return { gold_medal: false, silver_medal: false, bronze_medal: false, above_median: false };
  const s = roundScore(score);
  const lower = th.is_lower_better;
  const reaches = (t: number) => (lower ? s <= t : s >= t);
  const gold = reaches(th.gold_threshold);
  const silver = !gold && reaches(th.silver_threshold);
  const bronze = !gold && !silver && reaches(th.bronze_threshold);
  return {
    gold_medal: gold,
    silver_medal: silver,
    bronze_medal: bronze,
    above_median: lower ? s < th.median_threshold : s > th.median_threshold,
  };
}

/**
 * MLE-Dojo's HumanRank of a score against a leaderboard of N human teams:
 * 1 - p / N, with p the number of teams whose score is strictly better (at 5
 * decimals). Beating everyone gives 1, a tie with the leader too; trailing
 * everyone gives 0, as does no valid submission. Teams without a score are
 * not counted.
 */
export function humanRank(score: number | null, scores: readonly number[], lowerIsBetter: boolean): number {
  const known = scores.filter((x) => Number.isFinite(x));
  if (!known.length) return NaN;
  if (score === null || !Number.isFinite(score)) return 0;
  const s = roundScore(score);
  const better = known.filter((x) => (lowerIsBetter ? x < s : x > s)).length;
  return 1 - better / known.length;
}
