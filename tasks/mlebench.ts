// MLE-bench's competition sets and where a competition's pieces are
// (docs/tasks.md#mle-bench). Light on purpose: the mlebench stage's checks and
// key read it when an experiment is only validated or planned; building the
// task folders is tasks/mlebench-build.ts.
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import sets from './mlebench-sets.json';

export const MLEBENCH_SETS = ['lite', 'low', 'medium', 'high', 'all'] as const;
export type MlebenchSet = (typeof MLEBENCH_SETS)[number];

/** The competition ids of a named set (MLE-bench's splits; lite is the low split), or the ids given. */
export function competitionIds(set: MlebenchSet | readonly string[]): string[] {
  return typeof set === 'string' ? [...sets[set]] : [...set];
}

/** The folder that holds mlebench/competitions/: the checkout given, or the parent of its package folder. */
export function mlebenchRoot(dir: string): string {
  const d = resolve(dir);
  return !existsSync(join(d, 'mlebench', 'competitions')) && existsSync(join(d, 'competitions')) ? dirname(d) : d;
}

export interface Competition {
  id: string;
  public: string;
  private: string;
  /** The competition's folder in the checkout: grade.py, leaderboard.csv, config.yaml. */
  code: string;
  root: string;
}

/** Where a competition's pieces are, or why it cannot be a task (a clear message naming the fix). */
export function findCompetition(
  data: string,
  mlebench: string,
  id: string,
): Competition | { id: string; missing: string } {
  const root = mlebenchRoot(mlebench);
  const code = join(root, 'mlebench', 'competitions', id);
  const prepared = join(resolve(data), id, 'prepared');
  const pub = join(prepared, 'public');
  const priv = join(prepared, 'private');
  if (!existsSync(pub) || !existsSync(priv)) {
    return {
      id,
      missing: `no prepared data at ${prepared} (prepare it with MLE-bench: mlebench prepare -c ${id} --data-dir ${resolve(data)})`,
    };
  }
  for (const f of ['grade.py', 'leaderboard.csv']) {
    if (!existsSync(join(code, f)))
      return { id, missing: `no ${f} in ${code} (mlebench: must name an MLE-bench checkout)` };
  }
  return { id, public: pub, private: priv, code, root };
}
