// The mlebench stage's run(): one task folder per competition under tasks/,
// built in order. A competition without prepared data is listed in
// mlebench.json with the reason, and the rest still run. One whose grader does
// not load, or whose sample submission does not grade, fails the node after
// all were tried, naming each and why: a benchmark that silently grades
// nothing is worse than none. keep_going leaves those out and counts them.
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { StageFailure } from '../../core/errors.js';
import { runEvaluator } from '../../tasks/evaluate.js';
import { buildMlebenchTask } from '../../tasks/mlebench-build.js';
import { competitionIds, findCompetition } from '../../tasks/mlebench.js';
import type { StageContext, StageResult } from '../contract.js';
import type { MlebenchParams } from './index.js';

interface Built {
  id: string;
  teams?: number;
  is_lower_better?: boolean;
  sample_score?: number | null;
  error?: string;
  /** Why the competition's grader cannot grade here (it is then no task). */
  broken?: string;
}

export async function run(ctx: StageContext<MlebenchParams>): Promise<StageResult | void> {
  const p = ctx.params;
  const data = resolve(ctx.experimentDir, p.data);
  const code = resolve(ctx.experimentDir, p.mlebench);
  const python = ctx.python;
  const ids = competitionIds(p.set);
  await mkdir(join(ctx.outDir, 'tasks'));
  const built: Built[] = [];
  for (const [i, id] of ids.entries()) {
    ctx.signal.throwIfAborted();
    const c = findCompetition(data, code, id);
    if ('missing' in c) {
      ctx.log(`${id}: ${c.missing}`);
      built.push({ id, error: c.missing });
    } else {
      try {
        const dest = join(ctx.outDir, 'tasks', id);
        const r = await buildMlebenchTask(c, dest);
        // The sample submission shows that the grader runs here (its packages, the answers' format).
        const sample = await runEvaluator(dest, python, join(dest, 'public', r.sample_submission));
        if (sample.ok) built.push({ id, ...r, sample_score: sample.score });
        else {
          const broken = `its sample submission ${r.sample_submission} does not grade with ${python}: ${sample.fault ?? sample.error}`;
          ctx.log(`${id}: ${broken}`);
          await rm(dest, { recursive: true, force: true });
          built.push({ id, ...r, sample_score: null, broken });
        }
      } catch (err) {
        ctx.log(`${id}: ${(err as Error).message}`);
        built.push({ id, error: (err as Error).message });
      }
    }
    ctx.progress({ done: i + 1, total: ids.length, unit: 'competitions' });
  }
  await writeFile(
    join(ctx.outDir, 'mlebench.json'),
    JSON.stringify({ data, mlebench: code, competitions: built }, null, 2) + '\n',
  );
  const broken = built.filter((b) => b.broken);
  if (broken.length && !p.keep_going) {
    throw new StageFailure(
      `${broken.length} of ${ids.length} MLE-bench competitions cannot be graded here (keep_going: true leaves them out): ${broken.map((b) => `${b.id}: ${b.broken}`).join('; ')}`,
    );
  }
  const ok = built.filter((b) => !b.error && !b.broken).length;
  if (!ok)
    throw new StageFailure(
      `no MLE-bench competition could be made a task: ${built.map((b) => `${b.id}: ${b.error ?? b.broken}`).join('; ')}`,
    );
  return {
    metrics: {
      competitions: ids.length,
      tasks: ok,
      missing: built.filter((b) => b.error).length,
      broken: broken.length,
    },
  };
}
