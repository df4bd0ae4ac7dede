// The curate stage's run(): every trajectory of the inputs through D.1's rules
// in order (the first rule a run fails is the one counted), then embedding
// deduplication in the agent environment's Python (python/embed_dedup.py).
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { execa } from 'execa';
import type { Trajectory } from '../../agents/trajectory.js';
import { assetPath } from '../../core/assets.js';
import type { StageContext, StageResult } from '../contract.js';
import { trajectoryFiles } from '../sft/data.js';
import type { CurateParams } from './index.js';

export type Rule = 'execution' | 'valid_submission' | 'improvement';

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

/** The text two runs are compared on: the teacher's replies (the task prompt is the same for every run of a task). */
const replies = (t: Trajectory) =>
  t.messages
    .filter((m) => m.role === 'assistant')
    .map((m) => m.content)
    .join('\n');

export async function run(ctx: StageContext<CurateParams>): Promise<StageResult> {
  const p = ctx.params;
  const lines: string[] = [];
  for (const input of ctx.inputs)
    for (const f of trajectoryFiles(input.dir))
      lines.push(
        ...readFileSync(f, 'utf8')
          .split('\n')
          .filter((l) => l.trim()),
      );
  const dropped: Record<Rule | 'duplicates', number> = {
    execution: 0,
    valid_submission: 0,
    improvement: 0,
    duplicates: 0,
  };
  const passed: Array<{ line: string; t: Trajectory }> = [];
  for (const line of lines) {
    const t = JSON.parse(line) as Trajectory;
    const why = failedRule(t, p.min_gain_std);
    if (why) dropped[why]++;
    else passed.push({ line, t });
  }
  let kept = passed;
  let embedder: { name: string; fallback: string | null } | null = null;
  if (p.dedup && passed.length > 1) {
    const python = ctx.python;
    const input = JSON.stringify({
      texts: passed.map((x) => replies(x.t)),
      ranks: passed.map((x) => x.t.variables.improvement),
      groups: passed.map((x) => (p.scope === 'task' ? x.t.task_id : '')),
      threshold: p.similarity,
      model: p.embedding_model ? resolve(ctx.experimentDir, p.embedding_model) : null,
    });
    const r = await execa(python, [assetPath('python/embed_dedup.py')], {
      input,
      reject: false,
      cancelSignal: ctx.signal,
      env: { PYTHONDONTWRITEBYTECODE: '1', OMP_NUM_THREADS: '1' },
    });
    if (r.exitCode !== 0)
      throw new Error(
        `near-duplicate removal failed (exit ${r.exitCode}): ${String(r.stderr).trim().split('\n').slice(-3).join(' | ')}`,
      );
    const out = JSON.parse(String(r.stdout)) as { kept: number[]; embedder: string; why: string | null };
    embedder = { name: out.embedder, fallback: out.why };
    if (out.why) ctx.log(`embedding with ${out.embedder}: ${out.why}`);
    const keep = new Set(out.kept);
    kept = passed.filter((_, i) => keep.has(i));
    dropped.duplicates = passed.length - kept.length;
  }
  await writeFile(
    join(ctx.outDir, 'trajectories.jsonl'),
    kept.map((x) => x.line).join('\n') + (kept.length ? '\n' : ''),
  );
  const report = {
    read: lines.length,
    dropped,
    kept: kept.length,
    min_gain_std: p.min_gain_std,
    similarity: p.dedup ? p.similarity : null,
    scope: p.scope,
    embedder,
    tasks: new Set(kept.map((x) => x.t.task_id)).size,
  };
  await writeFile(join(ctx.outDir, 'curation.json'), JSON.stringify(report, null, 1) + '\n');
  ctx.log(`curation: ${JSON.stringify(report)}`);
  if (!kept.length)
    throw new Error(`no demonstration passes the filter (${JSON.stringify(dropped)} dropped of ${lines.length})`);
  return {
    metrics: {
      read: lines.length,
      kept: kept.length,
      dropped_execution: dropped.execution,
      dropped_valid_submission: dropped.valid_submission,
      dropped_improvement: dropped.improvement,
      dropped_duplicates: dropped.duplicates,
      embedder: embedder?.name ?? null,
    },
  };
}
