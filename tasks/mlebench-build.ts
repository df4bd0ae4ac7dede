// MLE-bench competitions as tasks of our contract (docs/tasks.md#mle-bench):
// the prepared public data for the agent, linked where MLE-bench put it; the
// private answers (linked too), the
// competition's config and a grader that calls its own grade function for
// the evaluator; thresholds from its leaderboard by MLE-bench's rule.
import { existsSync } from 'node:fs';
import { cp, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { assetText } from '../core/assets.js';
import { leaderboardScores, leaderboardThresholds, writeTaskLeaderboard } from './leaderboard.js';
import type { Competition } from './mlebench.js';
import { linkFolder, type Reference } from './references.js';
import { writeTaskJson } from './taskjson.js';
import { EnvError } from '../core/errors.js';

interface CompetitionConfig {
  grader?: { name?: string; grade_fn?: string };
  dataset?: { answers?: string; sample_submission?: string };
}

/** Builds the task folder; thresholds and direction come from the leaderboard. */
export async function buildMlebenchTask(
  c: Competition,
  dest: string,
): Promise<{ teams: number; is_lower_better: boolean; sample_submission: string }> {
  const lbFile = join(c.code, 'leaderboard.csv');
  const lbText = await readFile(lbFile, 'utf8');
  // The checkout keeps leaderboards in Git LFS: a pointer is not a leaderboard.
  if (lbText.startsWith('version https://git-lfs'))
    throw new EnvError(`${lbFile} is a Git LFS pointer (run git lfs pull in the MLE-bench checkout)`);
  const scores = leaderboardScores(lbText, lbFile);
  const th = leaderboardThresholds(scores);
  const cfgFile = join(c.code, 'config.yaml');
  const cfg = (existsSync(cfgFile) ? parseYaml(await readFile(cfgFile, 'utf8')) : {}) as CompetitionConfig;
  // config.yaml names the answers relative to the data folder: <id>/prepared/private/<file>.
  const answers = cfg.dataset?.answers?.split('/prepared/private/')[1] ?? 'test.csv';
  // The sample submission is named there too; not every competition calls it sample_submission.csv.
  const sample = cfg.dataset?.sample_submission?.split('/prepared/public/')[1] ?? 'sample_submission.csv';
  await rm(dest, { recursive: true, force: true });
  await mkdir(join(dest, 'private'), { recursive: true });
  // The prepared folders are linked, not copied (tasks/references.ts). MLE-bench's prepare writes
  // description.md into public/; a folder prepared without one is copied so that it can be added.
  const references: Record<string, Reference> = {};
  if (existsSync(join(c.public, 'description.md')) || !existsSync(join(c.code, 'description.md')))
    references.public = await linkFolder(c.public, dest, 'public');
  else {
    await cp(c.public, join(dest, 'public'), { recursive: true });
    await cp(join(c.code, 'description.md'), join(dest, 'public', 'description.md'));
  }
  references['private/answers'] = await linkFolder(c.private, dest, 'private/answers');
  const thresholds = {
    gold_threshold: th.gold_threshold,
    silver_threshold: th.silver_threshold,
    bronze_threshold: th.bronze_threshold,
    median_threshold: th.median_threshold,
  };
  await writeFile(join(dest, 'private', 'threshold.json'), JSON.stringify(thresholds, null, 2) + '\n');
  // The human scores, in rank order, for HumanRank (a missing score is null).
  await writeTaskLeaderboard(dest, { is_lower_better: th.is_lower_better, scores });
  const grader = {
    mlebench_root: c.root,
    grader_name: cfg.grader?.name ?? c.id,
    grade_fn: cfg.grader?.grade_fn ?? `mlebench.competitions.${c.id}.grade:grade`,
    answers: join('answers', answers),
    sample_submission: sample,
    is_lower_better: th.is_lower_better,
  };
  await writeFile(join(dest, 'private', 'mlebench.json'), JSON.stringify(grader, null, 2) + '\n');
  await writeFile(join(dest, 'private', 'evaluator.py'), assetText('tasks/py/mlebench_grade.py'));
  await writeTaskJson(dest, {
    id: c.id,
    generator: 'mlebench',
    metric: cfg.grader?.name ?? null,
    sample_submission: sample,
    is_lower_better: th.is_lower_better,
    leaderboard_teams: th.teams,
    source: { competition: c.id, data: dirname(dirname(c.public)), mlebench: c.root, leaderboard: basename(lbFile) },
    references,
  });
  return { teams: th.teams, is_lower_better: th.is_lower_better, sample_submission: sample };
}
