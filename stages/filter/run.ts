// The filter stage's run(): each task graded on its sample submission and
// checked for sanity, duplicates dropped, the rest split into train and val.
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { linkTree } from '../../core/fs.js';
import { sha256 } from '../../core/hash.js';
import { Rng } from '../../core/random.js';
import { mapLimit } from '../../core/pool.js';
import { runEvaluator } from '../../tasks/evaluate.js';
import { sanityProblem } from '../../tasks/sanity.js';
import type { StageContext, StageResult } from '../contract.js';
import type { FilterParams } from './index.js';

interface Drop {
  task: string;
  step: 'evaluator' | 'sanity' | 'duplicate';
  reason: string;
}

export async function run(ctx: StageContext<FilterParams>): Promise<StageResult | void> {
  const p = ctx.params;
  const python = ctx.python;
  const tasks: { id: string; dir: string }[] = [];
  for (const input of ctx.inputs) {
    for (const id of (await readdir(join(input.dir, 'tasks')).catch(() => [] as string[])).sort())
      tasks.push({ id, dir: join(input.dir, 'tasks', id) });
  }
  if (!tasks.length) ctx.log('no tasks in the inputs (their tasks/ folders are missing or empty)');
  const drops: Drop[] = [];
  const evaluated: { id: string; dir: string; digest: string }[] = [];
  let sane = 0;
  let done = 0;
  // Evaluators run side by side; their results are read in task order, so the outputs do not depend on timing.
  const results = await mapLimit(
    tasks,
    p.concurrency,
    (t) =>
      runEvaluator(t.dir, python).finally(() => ctx.progress({ done: ++done, total: tasks.length, unit: 'tasks' })),
    ctx.signal,
  );
  for (const [i, t] of tasks.entries()) {
    ctx.signal.throwIfAborted();
    const r = results[i]!;
    if (!r.ok) {
      drops.push({ task: t.id, step: 'evaluator', reason: r.error });
      continue;
    }
    const problem = sanityProblem(r, r.score, r.is_lower_better);
    if (problem) {
      drops.push({ task: t.id, step: 'sanity', reason: problem });
      continue;
    }
    sane++;
    const digest = sha256(
      (await readFile(join(t.dir, 'public', 'train.csv'))).toString() +
        (await readFile(join(t.dir, 'private', 'answer.csv'))).toString(),
    );
    evaluated.push({ ...t, digest });
  }
  const evaluatorOk = tasks.length - drops.filter((d) => d.step === 'evaluator').length;
  const seen = new Set<string>();
  const unique = evaluated.filter((t) => {
    if (p.dedupe && seen.has(t.digest)) {
      drops.push({ task: t.id, step: 'duplicate', reason: 'same training data and answers as an earlier task' });
      return false;
    }
    seen.add(t.digest);
    return true;
  });
  const order = new Rng('mlepipe-split', p.seed).shuffle(unique.map((t) => t.id));
  const nVal = Math.min(order.length, p.val >= 1 ? Math.floor(p.val) : Math.round(order.length * p.val));
  const val = order.slice(0, nVal).sort();
  const train = order.slice(nVal, p.train === undefined ? undefined : nVal + p.train).sort();
  // Tasks beyond train: and val: are left out of the output, so split: all is the two of them.
  const used = new Set([...train, ...val]);
  // Linked, not copied: the upstream node's files are as final as this node's (an image task has hundreds).
  for (const t of unique) if (used.has(t.id)) await linkTree(t.dir, join(ctx.outDir, 'tasks', t.id));
  const counts = {
    input: tasks.length,
    evaluator_ok: evaluatorOk,
    sane,
    unique: unique.length,
    train: train.length,
    val: val.length,
    ...(p.train === undefined ? {} : { unused: unique.length - used.size }),
  };
  await writeFile(join(ctx.outDir, 'split.json'), JSON.stringify({ train, val }, null, 2) + '\n');
  await writeFile(join(ctx.outDir, 'filter.json'), JSON.stringify({ counts, dropped: drops }, null, 2) + '\n');
  ctx.log(
    `filter: ${counts.input} → ${counts.evaluator_ok} → ${counts.sane} → ${counts.unique} (${counts.train} train / ${counts.val} val)`,
  );
  return { metrics: counts };
}
