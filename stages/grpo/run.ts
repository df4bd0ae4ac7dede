// The grpo stage's run(): the tasks and the reward, then the trainer `trainer:` names (trainers/). A trainer
// that takes its steps here gets them from the step loop below: rollouts in groups, shaped turn rewards when
// shaping is on, advantages, and an update per step (step.ts); verl runs its steps inside its own job.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { InternalError, ParamError, StageFailure } from '../../core/errors.js';
import { formatJsonl } from '../../core/json-files.js';
import { rewardFormula, rewardInputs } from '../../core/rewards/presets.js';
import type { StageContext, StageResult } from '../contract.js';
import { announceKept } from '../shared/resume.js';
import { preloadFor, stageSandbox } from '../shared/sandbox.js';
import { listTasks } from '../shared/tasks.js';
import { openTrainLog, type TrainLog } from '../shared/train-log.js';
import { curveSummary, lastValidation, quarterOf, type CurveRow } from './curve.js';
import { type GrpoParams, validates } from './index.js';
import { runPlans } from './plans.js';
import { runRollouts } from './rollouts.js';
import { ShapingSession } from './shaping/session.js';
import { bestValidation, keptStep, selectedMetrics, type Selected } from './select.js';
import { runStep, stepItemId } from './step.js';
import type { GrpoRun, StepTrainer } from './trainers/contract.js';
import { TRAINERS } from './trainers/index.js';
import { releaseOptions, releaseTextMetrics } from '../shared/release-checkout.js';

export async function run(ctx: StageContext<GrpoParams>): Promise<StageResult> {
  const grpo = await resolveRun(ctx);
  const opened = await TRAINERS[ctx.params.trainer].open(grpo);
  return 'result' in opened ? opened.result : trainSteps(grpo, opened);
}

/** The tasks trained and validated on, the reward, and the learning rate. */
async function resolveRun(ctx: StageContext<GrpoParams>): Promise<GrpoRun> {
  const p = ctx.params;
  const tasks = (split: GrpoParams['split']) =>
    listTasks({ tasks: p.tasks, split, inputs: ctx.inputs, experimentDir: ctx.experimentDir });
  const train = await tasks(p.split);
  if (!train.length) throw new StageFailure(`no ${p.split} tasks to train on (are the upstream stages empty?)`);
  const val = validates(p)
    ? await tasks(p.val_split).catch((err: Error) => {
        throw new ParamError(['val_split'], err.message);
      })
    : [];
  if (p.select === 'best-val' && !val.length)
    throw new ParamError(['select'], `select: best-val validates on the ${p.val_split} tasks, and there are none`);
  const formula = rewardFormula(p.reward, ctx.rewards);
  // Validation checks every reward a stage names before any node runs.
  if (formula === undefined) throw new InternalError(`reward ${p.reward} is neither defined nor a preset`);
  const inputs = rewardInputs(p.reward, ctx.rewards, p);
  const release = await releaseOptions(p, ctx.experimentDir, ctx.python);
  return { ctx, p, train, val, formula, inputs, lr: p.lr ?? TRAINERS[p.trainer].defaultLr, release };
}

/** Steps 1 to `steps` on a trainer that takes them here, then the node's curve and metrics. */
async function trainSteps(run: GrpoRun, trainer: StepTrainer): Promise<StageResult> {
  const { ctx, p } = run;
  // Jails are reused from rollout to rollout: never more of them than a step's rollouts.
  const preload = preloadFor({ models: trainer.servesModel, mlab: p.scaffold === 'mlab' });
  const sandbox = stageSandbox(ctx, Math.min(p.concurrency, p.batch_size * p.group_size), preload, {
    memoryMb: p.memory_mb,
  });
  const plans = runPlans(run, sandbox, () => trainer.signal());
  const curve: CurveRow[] = [];
  let shaping: ShapingSession | undefined;
  let trainLog: TrainLog | undefined;
  let pilot: Record<string, number> = {};
  let selected: Selected = { step: p.steps };
  try {
    if (p.shaping.kind !== 'none') {
      const policyWorker = () => trainer.policyWorker();
      shaping = await ShapingSession.open({ ctx, params: p.shaping, seed: p.seed, train: run.train, policyWorker });
    }
    trainLog = await openTrainLog(ctx, { config: p });
    if (shaping) pilot = await shaping.calibrate((j) => runRollouts(plans.pilot(j, trainer.policy(-j)), ctx.log));
    const steps = { run, trainer, plans, shaping, trainLog, curve };
    await announceKept(
      ctx,
      Array.from({ length: p.steps }, (_, i) => stepItemId(i + 1)),
      'steps',
    );
    for (let k = 1; k <= p.steps; k++) curve.push(await runStep(steps, k));
    selected = selectStep(p, curve);
    await trainer.publish(selected.step);
  } finally {
    await Promise.all([sandbox.shutdown(), trainer.stop(), shaping?.stop(), trainLog?.close()]);
  }
  await shaping?.writeBank(ctx.outDir);
  await writeFile(join(ctx.outDir, 'metrics.jsonl'), formatJsonl(curve));
  await writeFile(join(ctx.outDir, 'rows.json'), JSON.stringify({ curve }, null, 1) + '\n');
  const shaped = shaping?.summary(curve, quarterOf(curve.length)) ?? {};
  const chosen = p.select === 'best-val' ? selectedMetrics(selected) : {};
  return {
    metrics: {
      ...curveSummary(curve),
      ...pilot,
      ...shaped,
      ...lastValidation(curve),
      ...releaseTextMetrics(run.release),
      ...chosen,
    },
  };
}

/** The step whose weights the node hands on: the last, or for best-val the best validated step with a checkpoint. */
function selectStep(p: GrpoParams, curve: readonly CurveRow[]): Selected {
  if (p.select !== 'best-val') return { step: p.steps };
  const best = bestValidation(curve, keptStep(p));
  // resolveRun refuses best-val without validation tasks, and check() without validation steps.
  if (!best) throw new StageFailure('select: best-val: no validation step with a checkpoint recorded a val_reward');
  return best;
}
