// One step of a run trained step by step: sample the step's rollouts, shape their turns, build the batch,
// update the policy, validate when due, and keep all of it in the step's item, which a rerun reuses whole.
import { cp, mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { stepTrajectoriesFile, TRAJECTORIES_FILE } from '../../agents/trajectory-files.js';
import { formatJsonl, readJson } from '../../core/json-files.js';
import type { TrainLog } from '../shared/train-log.js';
import { learningRate } from '../shared/schedule.js';
import { buildBatch, type Batch, type Rollout } from './batch.js';
import type { CurveRow } from './curve.js';
import { stepMetrics, valMetrics } from './metrics.js';
import type { RunPlans } from './plans.js';
import { runRollouts } from './rollouts.js';
import type { ShapingSession } from './shaping/session.js';
import type { StepShaping } from './shaping/score.js';
import { bestValidation, keptStep } from './select.js';
import type { GrpoRun, StepTrainer } from './trainers/contract.js';

/** What every step of a run shares. */
export interface StepRun {
  run: GrpoRun;
  trainer: StepTrainer;
  plans: RunPlans;
  shaping?: ShapingSession;
  trainLog: TrainLog;
  /** The rows of the steps finished so far. */
  curve: readonly CurveRow[];
}

/** The item step k is kept in, across attempts of the node. */
export const stepItemId = (k: number): string => `step-${String(k).padStart(5, '0')}`;

/** Step k: run now, or reused from an earlier attempt; its row of the curve, once logged and kept in the node. */
export async function runStep(s: StepRun, k: number): Promise<CurveRow> {
  const { ctx, p } = s.run;
  ctx.signal.throwIfAborted();
  const itemId = stepItemId(k);
  let dir = await ctx.items.get(itemId);
  if (!dir) {
    await s.trainer.prepare(k);
    await s.shaping?.scorer();
    dir = await ctx.items
      .put(itemId, (d) => trainStep(s, k, d))
      .catch(async (err: unknown) => {
        throw await s.trainer.failure(k, err);
      });
    // Retention keeps the checkpoint best-val would hand on from the steps before (this one is kept anyway).
    const best = p.select === 'best-val' ? bestValidation(s.curve, keptStep(p))?.step : undefined;
    await s.trainer.recorded(k, best);
  } else {
    ctx.log(`step ${k}: finished by an earlier attempt; its checkpoint is reused`);
  }
  await s.trainer.finished(k, dir);
  await s.shaping?.finished(k, dir);
  const row = await readJson<CurveRow>(join(dir, 'step.json'));
  s.trainLog.write(row);
  const val = row.val_reward !== undefined ? `, val reward ${row.val_reward}` : '';
  const summary = `step ${k}/${p.steps}: reward ${row.reward_mean} ± ${row.reward_std}, valid ${row.valid_rate}${val}`;
  ctx.log(summary);
  ctx.progress({ done: k, total: p.steps, unit: 'steps', summary });
  const kept = stepTrajectoriesFile(ctx.outDir, k);
  await mkdir(dirname(kept), { recursive: true });
  await cp(join(dir, TRAJECTORIES_FILE), kept);
  return row;
}

/** The work of step k, written into its item's folder `d`. */
async function trainStep(s: StepRun, k: number, d: string): Promise<void> {
  const { ctx, p } = s.run;
  const started = Date.now();
  const rollouts: Rollout[] = await runRollouts(s.plans.step(k, s.trainer.policy(k)), ctx.log);
  ctx.signal.throwIfAborted();
  const shaped = s.shaping ? await s.shaping.shape(rollouts, k) : undefined;
  const lr = learningRate(k - 1, p.steps, s.run.lr, p.schedule, 0);
  const batch = buildBatch(k, rollouts, {
    advantage: p.advantage,
    maskTimeouts: p.mask_timeouts,
    timeoutRule: p.timeout_rule,
    maxTurns: p.max_turns,
    std: p.std,
    groupSize: p.group_size,
    hyper: { lr, clip_low: p.clip.low, clip_high: p.clip.high, kl: p.kl, temperature: p.temperature },
    exact: s.trainer.exact(),
    shaped: shaped && new Map([...shaped.trajectories].map(([id, v]) => [id, v.rewards])),
  });
  const update = await s.trainer.step(k, batch, rollouts, lr, d);
  const metrics: Record<string, unknown> = {
    ...stepMetrics(k, rollouts, batch),
    lr,
    ...Object.fromEntries(Object.entries(update).filter(([, v]) => typeof v === 'number')),
  };
  if (p.eval_every > 0 && (k % p.eval_every === 0 || k === p.steps) && s.run.val.length) {
    const vr = await runRollouts(s.plans.val(k, s.trainer.policy(k)), ctx.log);
    Object.assign(metrics, valMetrics(vr));
    await writeFile(join(d, 'val.jsonl'), formatJsonl(vr));
  }
  if (s.shaping && shaped) Object.assign(metrics, await s.shaping.record(d, k, rollouts, shaped));
  metrics.seconds = Number(((Date.now() - started) / 1000).toFixed(1));
  await writeStepRecords(d, { rollouts, batch, metrics, shaping: s.shaping, shaped });
}

/** The step's rollouts (with their shaping), advantages and row of the curve. */
async function writeStepRecords(
  d: string,
  o: {
    rollouts: readonly Rollout[];
    batch: Batch;
    metrics: Record<string, unknown>;
    shaping?: ShapingSession;
    shaped?: StepShaping;
  },
): Promise<void> {
  const { shaping, shaped } = o;
  const records = shaping && shaped ? o.rollouts.map((r) => shaping.annotate(r, shaped)) : o.rollouts;
  await writeFile(join(d, TRAJECTORIES_FILE), formatJsonl(records));
  const trajectories = o.batch.trajectories.map(({ messages: _m, ...t }) => t);
  await writeFile(join(d, 'advantages.json'), JSON.stringify({ groups: o.batch.groups, trajectories }, null, 1) + '\n');
  await writeFile(join(d, 'step.json'), JSON.stringify(o.metrics) + '\n');
}
