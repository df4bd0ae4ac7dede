// `trainer: verl`: the verl export, kept in the node's item store (stable
// across attempts, unlike the staging folder), run as a Ray job with the
// sandbox service serving its agent loop and reward function for the job's
// lifetime. The job's checkpoints and verl's metrics come back into the node's
// output; the metrics in the local trainer's metrics.jsonl shape. The weights
// handed on are the last step's, or under `select: best-val` those of the
// best validated step (verl validates at the steps it saves, as the local
// trainers do, so the check on eval_every and checkpoint_every holds here too).
import { cp, readFile, writeFile } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { formatJsonl } from '../../core/json-files.js';
import { StageFailure } from '../../core/errors.js';
import { collectVerlCheckpoint, verlStepsWithWeights } from '../../gpu/verl/checkpoint.js';
import { writeVerlExport, type ExportOptions, type ExportTask } from '../../gpu/verl/export.js';
import { verlCurve } from '../../gpu/verl/metrics.js';
import { exportServing, startSandboxService } from '../../gpu/verl/service.js';
import { pilotLastStep, shapingCalibration, shapingRecords } from '../../gpu/verl/service-shaping.js';
import { verlShapingCurve } from './verl-shaping.js';
import type { StageContext, StageResult } from '../contract.js';
import { starterScore } from '../shared/tasks.js';
import { stageSandbox } from '../shared/sandbox.js';
import { CHECKPOINT_DIR } from '../shared/weights.js';
import { collectTensorboard, runVerlJob } from '../shared/verl-job.js';
import { curveSummary, type CurveRow } from './curve.js';
import type { GrpoParams } from './index.js';
import { bestValidation, selectedMetrics, type Selected } from './select.js';

export async function runVerl(
  ctx: StageContext<GrpoParams>,
  train: readonly ExportTask[],
  val: readonly ExportTask[],
  o: ExportOptions,
): Promise<StageResult> {
  const p = ctx.params;
  const exportDir =
    (await ctx.items.get('verl-export')) ??
    (await ctx.items.put('verl-export', async (d) => void (await writeVerlExport(d, train, val, o))));
  const resultsDir = (await ctx.items.get('verl-results')) ?? (await ctx.items.put('verl-results', async () => {}));
  const service = () => startService(ctx, exportDir);
  const job = await runVerlJob(ctx as StageContext<unknown>, { verl: p.verl, exportDir, resultsDir, service });
  await cp(exportDir, join(ctx.outDir, 'verl'), { recursive: true });
  await collectTensorboard(resultsDir, ctx.outDir);
  const raw = existsSync(join(resultsDir, 'metrics.jsonl'))
    ? await readFile(join(resultsDir, 'metrics.jsonl'), 'utf8')
    : '';
  const curve = verlCurve(raw);
  // The chosen step's weights as a worker checkpoint (what an eval's `checkpoint:` entry serves); verl's own
  // sharded checkpoints stay in the item store, where a rerun of the job resumes from them.
  const checkpoints = join(resultsDir, 'checkpoints');
  const selected = p.select === 'best-val' ? await bestVerlStep(checkpoints, curve) : undefined;
  const { step } = await collectVerlCheckpoint(checkpoints, join(ctx.outDir, CHECKPOINT_DIR), 'ppo', selected?.step);
  ctx.log(
    `${selected ? 'best validated' : 'final'} weights (verl step ${step}): ${join(ctx.outDir, CHECKPOINT_DIR, 'model')}`,
  );
  const calibration = o.shaping ? await addShaping(ctx, exportDir, o.shaping.config, curve) : undefined;
  await writeFile(join(ctx.outDir, 'metrics.jsonl'), formatJsonl(curve));
  await writeFile(join(ctx.outDir, 'rows.json'), JSON.stringify({ curve }, null, 1) + '\n');
  await writeFile(join(ctx.outDir, 'job.json'), JSON.stringify(job) + '\n');
  return {
    metrics: {
      ...curveSummary(curve),
      ...(calibration ? { beta: calibration.beta, pilot_turns: calibration.turns } : {}),
      ...(selected ? selectedMetrics(selected) : {}),
    },
  };
}

/** `select: best-val` on a job's curve: the best validated step among those whose weights verl kept. */
async function bestVerlStep(checkpoints: string, curve: readonly CurveRow[]): Promise<Selected> {
  const saved = new Set(await verlStepsWithWeights(checkpoints, 'ppo'));
  const best = bestValidation(curve, (k) => saved.has(k));
  if (!best)
    throw new StageFailure(
      `select: best-val: the job's metrics.jsonl has no validation step among those whose weights it kept (${[...saved].join(', ') || 'none'})`,
    );
  return best;
}

/**
 * The sandbox service for the job's agent loop and reward, behind a token per run: sandbox_host may be an
 * address the whole cluster reaches.
 */
async function startService(ctx: StageContext<GrpoParams>, exportDir: string) {
  const p = ctx.params;
  const sandbox = stageSandbox(ctx, Math.min(p.concurrency, p.batch_size * p.group_size), undefined, {
    memoryMb: p.memory_mb,
  });
  const token = randomBytes(24).toString('hex');
  try {
    const s = await startSandboxService({
      ...(await exportServing(exportDir)),
      sandbox,
      python: ctx.python,
      starter: starterScore,
      host: p.verl.sandbox_host,
      token,
      log: ctx.log,
    });
    ctx.log(`sandbox service for the job at ${s.url}`);
    return { url: s.url, token, close: async () => (await s.close(), await sandbox.shutdown()) };
  } catch (err) {
    await sandbox.shutdown();
    throw err;
  }
}

/**
 * The loop's per-call scores, recorded by the service step by step, joined to the curve at their steps, with
 * the β each step was shaped by (0 in the pilot's). Returns the pilot's calibration when the job made one.
 */
async function addShaping(
  ctx: StageContext<GrpoParams>,
  exportDir: string,
  config: { beta?: number; pilot_steps?: number },
  curve: CurveRow[],
) {
  const calibration = await shapingCalibration(exportDir);
  const written = config.beta;
  const pilotEnd = calibration ? pilotLastStep(calibration.first_step, config.pilot_steps) : Infinity;
  const byStep = verlShapingCurve(
    await shapingRecords(exportDir),
    (step) => written ?? (calibration && step > pilotEnd ? calibration.beta : 0),
  );
  for (const row of curve) Object.assign(row, byStep.get(Number(row.step)) ?? {});
  if (calibration) await writeFile(join(ctx.outDir, 'calibration.json'), JSON.stringify(calibration, null, 1) + '\n');
  return calibration;
}
