// The curate stage's run(): every trajectory of the inputs through D.1's rules
// in order (the first rule a run fails is the one counted), then embedding
// deduplication in the agent environment's Python (dedup.ts).
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  readTrajectories,
  TRAJECTORIES_FILE,
  trajectoryFiles,
  writeTrajectories,
} from '../../agents/trajectory-files.js';
import type { Trajectory } from '../../agents/trajectory.js';
import { StageFailure } from '../../core/errors.js';
import type { StageContext, StageResult } from '../contract.js';
import { nearDuplicates } from './dedup.js';
import type { CurateParams } from './index.js';

export type Rule = 'execution' | 'valid_submission' | 'improvement';

type Dropped = Record<Rule | 'duplicates', number>;

/** The first of D.1's rules a run fails, or undefined when it passes them all. */
export function failedRule(t: Trajectory, minGainStd: number): Rule | undefined {
  const scripts = t.turns.filter((x) => x.action === 'code');
  const last = scripts[scripts.length - 1];
  if (t.ended === 'policy_error' || t.ended === 'interrupted' || (last && (last.exit_code !== 0 || last.timed_out)))
    return 'execution';
  if (t.variables.valid !== 1 || !t.evaluation) return 'valid_submission';
  // `improvement` is the gain over the starter in the metric's direction; a task without a baseline cannot show one.
  if (t.starter_score === null || !(t.variables.improvement > minGainStd * (t.starter_std ?? 0))) return 'improvement';
  return undefined;
}

/** Every recorded run of the inputs, in the order of the inputs and their files. */
async function readInputs(ctx: StageContext<CurateParams>): Promise<Trajectory[]> {
  const all: Trajectory[] = [];
  for (const input of ctx.inputs)
    for (const { file } of trajectoryFiles(input.dir)) all.push(...(await readTrajectories(file)));
  return all;
}

export async function run(ctx: StageContext<CurateParams>): Promise<StageResult> {
  const p = ctx.params;
  const read = await readInputs(ctx);
  const dropped: Dropped = { execution: 0, valid_submission: 0, improvement: 0, duplicates: 0 };
  const passed: Trajectory[] = [];
  for (const t of read) {
    const why = failedRule(t, p.min_gain_std);
    if (why) dropped[why]++;
    else passed.push(t);
  }
  let kept = passed;
  let embedder: { name: string; fallback: string | null } | null = null;
  if (p.dedup && passed.length > 1) {
    const out = await nearDuplicates(ctx, passed);
    embedder = { name: out.embedder, fallback: out.why };
    if (out.why) ctx.log(`embedding with ${out.embedder}: ${out.why}`);
    const keep = new Set(out.kept);
    kept = passed.filter((_, i) => keep.has(i));
    dropped.duplicates = passed.length - kept.length;
  }
  // Each kept run is written back as it was read: the same record, and the same line where mlepipe wrote it.
  await writeTrajectories(join(ctx.outDir, TRAJECTORIES_FILE), kept);
  const report = {
    read: read.length,
    dropped,
    kept: kept.length,
    min_gain_std: p.min_gain_std,
    similarity: p.dedup ? p.similarity : null,
    scope: p.scope,
    embedder,
    tasks: new Set(kept.map((t) => t.task_id)).size,
  };
  await writeFile(join(ctx.outDir, 'curation.json'), JSON.stringify(report, null, 1) + '\n');
  ctx.log(`curation: ${JSON.stringify(report)}`);
  if (!kept.length)
    throw new StageFailure(`no demonstration passes the filter (${JSON.stringify(dropped)} dropped of ${read.length})`);
  return { metrics: curateMetrics(read.length, kept.length, dropped, embedder?.name ?? null) };
}

function curateMetrics(read: number, kept: number, dropped: Dropped, embedder: string | null) {
  return {
    read,
    kept,
    dropped_execution: dropped.execution,
    dropped_valid_submission: dropped.valid_submission,
    dropped_improvement: dropped.improvement,
    dropped_duplicates: dropped.duplicates,
    embedder,
  };
}
