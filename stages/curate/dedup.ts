// Embedding deduplication of the runs that passed D.1's rules, in the agent environment's Python
// (python/embed_dedup.py): within a cluster of near-copies only the highest-improvement run stays.
import { resolve } from 'node:path';
import { execa } from 'execa';
import type { Trajectory } from '../../agents/trajectory.js';
import { assetPath } from '../../core/assets.js';
import { StageFailure } from '../../core/errors.js';
import { isObject } from '../../core/json-files.js';
import { parseJson } from '../../core/text.js';
import type { StageContext } from '../contract.js';
import type { CurateParams } from './index.js';

/** What the deduplication answers: the indices kept, the embedder used, and why it fell back, if it did. */
export interface Deduplicated {
  kept: number[];
  embedder: string;
  why: string | null;
}

/** The text two runs are compared on: the teacher's replies (the task prompt is the same for every run of a task). */
const replies = (t: Trajectory) =>
  t.messages
    .filter((m) => m.role === 'assistant')
    .map((m) => m.content)
    .join('\n');

const answerProblem = (v: unknown) =>
  isObject(v) ?? (Array.isArray((v as { kept?: unknown }).kept) ? undefined : 'no "kept" list');

/** Which of `runs` stay once near-duplicates are removed (with `scope: task`, only runs of one task compete). */
export async function nearDuplicates(
  ctx: StageContext<CurateParams>,
  runs: readonly Trajectory[],
): Promise<Deduplicated> {
  const p = ctx.params;
  const input = JSON.stringify({
    texts: runs.map(replies),
    ranks: runs.map((t) => t.variables.improvement),
    groups: runs.map((t) => (p.scope === 'task' ? t.task_id : '')),
    threshold: p.similarity,
    model: p.embedding_model ? resolve(ctx.experimentDir, p.embedding_model) : null,
  });
  const r = await execa(ctx.python, [assetPath('python/embed_dedup.py')], {
    input,
    reject: false,
    cancelSignal: ctx.signal,
    env: { PYTHONDONTWRITEBYTECODE: '1', OMP_NUM_THREADS: '1' },
  });
  if (r.exitCode !== 0)
    throw new StageFailure(
      `near-duplicate removal failed (exit ${r.exitCode}): ${String(r.stderr).trim().split('\n').slice(-3).join(' | ')}`,
    );
  const out = parseJson(String(r.stdout), 'embed_dedup.py');
  const problem = answerProblem(out);
  if (problem) throw new StageFailure(`near-duplicate removal answered badly: ${problem}`);
  return out as Deduplicated;
}
