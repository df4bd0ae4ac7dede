// `uses: mlebench`: MLE-bench competitions, prepared by MLE-bench, as task
// folders of our contract (tasks/mlebench.ts), for eval and grpo stages to
// take through needs:. A competition without prepared data is reported and
// skipped; the others still become tasks.
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { sha256 } from '../../core/hash.js';
import { competitionIds, findCompetition, mlebenchRoot, type MlebenchSet } from '../../tasks/mlebench.js';
import { statListing } from '../../core/fs.js';
import schema from '../../schemas/stages/mlebench.schema.json';
import type { Need, Stage } from '../contract.js';
import { lazyRun } from '../lazy.js';
import { mlebenchSize } from './size.js';

export interface MlebenchParams {
  data: string;
  mlebench: string;
  set: MlebenchSet | string[];
  keep_going: boolean;
}

/**
 * What identifies a competition's inputs without reading its data: the
 * grader's files by content, the prepared folders' files by name, size and
 * time (prepared data runs to gigabytes; MLE-bench writes it once, and the
 * tasks link to it rather than copy it).
 */
async function competitionIdentity(data: string, mlebench: string, id: string): Promise<unknown> {
  const c = findCompetition(data, mlebench, id);
  if ('missing' in c) return { id, missing: true };
  const files: Record<string, string | null> = {};
  for (const f of ['grade.py', 'leaderboard.csv', 'config.yaml']) {
    const p = join(c.code, f);
    files[f] = existsSync(p) ? sha256(await readFile(p)) : null;
  }
  // The same listing the task records and checks at every use (tasks/references.ts).
  return { id, files, public: await statListing(c.public), private: await statListing(c.private) };
}

export const mlebench: Stage<MlebenchParams> = {
  kind: 'mlebench',
  version: 3,
  description: "MLE-bench competitions (prepared data, the competition's grader, leaderboard thresholds) as tasks.",
  schema,
  flow: { gives: ['tasks'] },

  // No check of the folders: they may be absent when an experiment is only
  // validated or planned (the data lives elsewhere), and a checkout may hold
  // competitions outside the splits. A competition without data is reported
  // when the node runs, and before that by the preflight of plan and run.

  preflight(p, ctx) {
    const data = resolve(ctx.experimentDir, p.data);
    const root = mlebenchRoot(resolve(ctx.experimentDir, p.mlebench));
    const needs: Need[] = [
      { what: 'MLE-bench checkout', path: root, param: ['mlebench'], why: 'a clone of openai/mle-bench' },
      { what: 'MLE-bench data folder', path: data, param: ['data'], why: 'mlebench prepare --data-dir DIR' },
    ];
    // The same files findCompetition looks for when the node runs, which leaves out a competition without them.
    for (const id of competitionIds(p.set)) {
      const code = join(root, 'mlebench', 'competitions', id);
      const prepared = join(data, id, 'prepared');
      needs.push(
        ...['public', 'private'].map((f) => ({
          what: 'prepared competition data',
          path: join(prepared, f),
          param: ['data'],
          optional: true,
        })),
        ...['grade.py', 'leaderboard.csv'].map((f) => ({
          what: 'competition grader',
          path: join(code, f),
          param: ['mlebench'],
          optional: true,
        })),
      );
    }
    return needs;
  },

  async keyExtras(p, ctx) {
    const data = resolve(ctx.experimentDir, p.data);
    const code = resolve(ctx.experimentDir, p.mlebench);
    return {
      competitions: await Promise.all(competitionIds(p.set).map((id) => competitionIdentity(data, code, id))),
      python: await ctx.python(),
    };
  },

  size: mlebenchSize,
  run: lazyRun(() => import('./run.js')),
};
