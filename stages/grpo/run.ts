// The grpo stage's run(): rollouts in groups, milestone rewards and
// advantages, an update step per batch on the chosen trainer.
import { cp, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { templateUpdate } from '../../agents/grpo/template-trainer.js';
import { openaiPolicy } from '../../agents/policies/openai.js';
import { freshCheckpoint, templatePolicy } from '../../agents/policies/template/index.js';
import type { TemplateCheckpoint } from '../../agents/policies/template/model.js';
import type { Policy } from '../../agents/policies/types.js';
import { ParamError } from '../../core/errors.js';
import { mean } from '../../core/stats.js';
import { rewardFormula, rewardInputs } from '../../core/rewards/presets.js';
import { type ExportOptions, writeVerlExport } from '../../gpu/verl/export.js';
import { checkCpuWeights, taskCorpus, verlWeightsOf } from '../shared/verl-job.js';
import type { Metrics, StageContext, StageResult } from '../contract.js';
import { listTasks, type TaskRef } from '../shared/tasks.js';
import { preloadFor, stageSandbox } from '../shared/sandbox.js';
import { buildBatch, isCrashed, templateSamples, type Rollout } from './batch.js';
import type { Trajectory } from '../../agents/trajectory.js';
import { stepMetrics, valMetrics } from './metrics.js';
import { learningRate } from '../shared/schedule.js';
import { pickBatch, runRollouts, type RolloutPlan } from './rollouts.js';
import { SolutionBank } from '../../agents/shaping/bank.js';
import { mlabScaffold } from '../../agents/scaffolds/mlab/index.js';
import { react } from '../../agents/scaffolds/react/index.js';
import { verlShaping } from './verl-shaping.js';
import {
  openScorer,
  openSummaries,
  pilotBeta,
  shapingSummary,
  scoreRollouts,
  seedBank,
  shapeStep,
  type OpenScorer,
  type StepShaping,
} from './shaping.js';
import { openTrainLog, type TrainLog } from '../shared/train-log.js';
import {
  openWorkerTrainer,
  publishCheckpoint,
  type WorkerTrainer,
  type WorkerTrainerOptions,
} from './worker-trainer.js';
import { CONTEXT_TOKENS, type GrpoParams, validates } from './index.js';

const pad = (k: number) => String(k).padStart(5, '0');
/** Characters kept of stdout and of stderr in an observation (the sandbox service keeps as many). */
const OBSERVATION_CHARS = 4000;

export async function run(ctx: StageContext<GrpoParams>): Promise<StageResult | void> {
  const p = ctx.params;
  const python = ctx.python;
  const formula = rewardFormula(p.reward, ctx.rewards)!;
  const inputs = rewardInputs(p.reward, ctx.rewards, p);
  const lr = p.lr ?? (p.trainer === 'template' ? 0.05 : 1e-6);
  const train = await listTasks({
    tasks: p.tasks,
    split: p.split,
    inputs: ctx.inputs,
    experimentDir: ctx.experimentDir,
  });
  if (!train.length) throw new Error(`no ${p.split} tasks to train on (are the upstream stages empty?)`);
  const val = validates(p)
    ? await listTasks({
        tasks: p.tasks,
        split: p.val_split,
        inputs: ctx.inputs,
        experimentDir: ctx.experimentDir,
      }).catch((err: Error) => {
        throw new ParamError(['val_split'], err.message);
      })
    : [];
  const hyper = { lr, clip_low: p.clip.low, clip_high: p.clip.high, kl: p.kl, temperature: p.temperature };

  if (p.trainer === 'verl-export' || p.trainer === 'verl') {
    const weights = await verlWeightsOf(ctx as StageContext<unknown>, p.policy, () => taskCorpus(train));
    checkCpuWeights(p.verl, weights.model);
    const cpu = p.verl.device === 'cpu';
    const options: ExportOptions = {
      ...weights,
      reward: formula,
      inputs,
      groupSize: p.group_size,
      batchSize: p.batch_size,
      steps: p.steps,
      maxTurns: p.max_turns,
      stepTimeoutS: p.step_timeout,
      timeBudgetS: p.time_budget,
      memoryMb: p.memory_mb,
      contextTokens: CONTEXT_TOKENS,
      maskTimeouts: p.mask_timeouts,
      timeoutRule: p.timeout_rule,
      lr,
      clipLow: p.clip.low,
      clipHigh: p.clip.high,
      kl: p.kl,
      temperature: p.temperature,
      advantage: p.advantage,
      lossAggMode: p.loss_agg_mode,
      // A CPU run trains on one worker, whatever the cluster keys say.
      nodes: cpu ? 1 : p.verl.nodes,
      gpusPerNode: cpu ? 1 : p.verl.gpus_per_node,
      ...(cpu ? { cpu: { kvCacheGib: p.verl.kv_cache_gib } } : {}),
      rollout: p.verl.rollout,
      rolloutTp: p.verl.rollout_tp,
      gpuMemoryGib: p.verl.gpu_memory_gib,
      checkpointEvery: p.checkpoint_every,
      keepCheckpoints: p.keep_checkpoints,
      evalEvery: p.eval_every,
      loggers: ctx.tracking?.logger,
      ...(p.shaping.kind !== 'none' ? { shaping: await verlShaping(ctx, p, train) } : {}),
      ...(p.scaffold === 'mlab'
        ? {
            mlab: {
              tools: p.tools ?? 'domain',
              toolDropout: p.tool_dropout,
              seed: p.seed,
              observationChars: OBSERVATION_CHARS,
            },
          }
        : {}),
    };
    if (p.trainer === 'verl') return (await import('./verl-run.js')).runVerl(ctx, train, val, options);
    const files = await writeVerlExport(join(ctx.outDir, 'verl'), train, val, options);
    ctx.log(`verl run directory written (not launched): ${files.join(', ')}`);
    return { metrics: { train_tasks: train.length, val_tasks: val.length, exported: true } };
  }

  const isWorker = p.trainer === 'worker';
  const wo: WorkerTrainerOptions = {
    policy: p.policy,
    workerUrl: p.worker_url,
    checkpointEvery: p.checkpoint_every,
    keepCheckpoints: p.keep_checkpoints,
    steps: p.steps,
    gradientCheckpointing: p.gradient_checkpointing,
    planTokens: CONTEXT_TOKENS,
  };
  // Connected (or started) on the first step that has to run: a rerun whose steps are all finished starts nothing.
  let worker: WorkerTrainer | undefined;
  let ck: TemplateCheckpoint = freshCheckpoint();
  const reference = freshCheckpoint().weights;
  const makePolicy = (k: number): Policy =>
    p.trainer === 'template'
      ? templatePolicy('template', ck, { temperature: p.temperature, seed: `${p.seed}:${k}`, maxTurns: p.max_turns })
      : openaiPolicy(p.policy, worker!.spec, {
          sampling: { temperature: p.temperature, seed: p.seed * 100_003 + k, logprobs: true },
          log: ctx.log,
        });
  // Jails are reused from rollout to rollout: never more of them than a step's rollouts.
  const preload = preloadFor({ models: p.trainer !== 'template', mlab: p.scaffold === 'mlab' });
  const sandbox = stageSandbox(ctx, Math.min(p.concurrency, p.batch_size * p.group_size), preload, {
    memoryMb: p.memory_mb,
  });
  const scaffolds = {
    train:
      p.scaffold === 'mlab'
        ? mlabScaffold({ tools: p.tools ?? 'domain', toolDropout: p.tool_dropout, seed: p.seed })
        : react,
    // Validation offers every tool: dropout is a training-time control.
    val: p.scaffold === 'mlab' ? mlabScaffold({ tools: p.tools ?? 'domain', toolDropout: 0, seed: p.seed }) : react,
  };
  const plan = (
    tasks: TaskRef[],
    group: number,
    k: number,
    policy: Policy,
    prefix = `step${k}`,
    scaffold = scaffolds.train,
  ): RolloutPlan => ({
    sandbox,
    policy,
    scaffold,
    tasks,
    group,
    groupPrefix: prefix,
    limits: {
      maxTurns: p.max_turns,
      stepTimeoutMs: p.step_timeout * 1000,
      timeBudgetMs: p.time_budget * 1000,
      contextTokens: CONTEXT_TOKENS,
      observationChars: OBSERVATION_CHARS,
    },
    memoryMb: p.memory_mb,
    promptFormat: p.prompt_format,
    python,
    seed: p.seed,
    reward: formula,
    inputs,
    concurrency: p.concurrency,
    // A worker that died mid-step ends the step's rollouts at once (its failure then names the worker).
    signal: worker ? AbortSignal.any([ctx.signal, worker.gone]) : ctx.signal,
  });
  const curve: Array<Record<string, number | null>> = [];
  // Turn-level shaping: the bank as it stands before each step's rollouts, the scorer opened on first use.
  const shaping = p.shaping.kind !== 'none' ? p.shaping : undefined;
  const summaries = shaping ? openSummaries(ctx, shaping, train) : undefined;
  let bank = shaping
    ? await seedBank(ctx, train, summaries!).catch(async (err: unknown) => {
        await summaries!.stop();
        throw err;
      })
    : undefined;
  if (bank)
    ctx.log(`solution bank: ${bank.size()} verified demonstration summaries for ${train.length} training tasks`);
  let scorer: OpenScorer | undefined;
  const openShapingScorer = async () => {
    if (isWorker) worker ??= await openWorkerTrainer(ctx, wo, 0);
    scorer ??= await openScorer(ctx, shaping!, worker?.client);
    return scorer.scorer;
  };
  let beta = shaping?.beta;
  const pilot: Record<string, number> = {};
  let trainLog: TrainLog | undefined;
  try {
    trainLog = await openTrainLog(ctx, { config: p });
    if (shaping && beta === undefined) {
      const cal = await pilotBeta(ctx, shaping, {
        bank: bank!,
        scorer: openShapingScorer,
        rollouts: (j) =>
          runRollouts(
            plan(pickBatch(train, p.batch_size, j, p.seed), p.group_size, -j, makePolicy(-j), `pilot${j}`),
            ctx.log,
          ),
      });
      beta = cal.beta;
      Object.assign(pilot, {
        beta: cal.beta,
        pilot_mean_abs_shaping: Number(cal.mean_abs_shaping.toFixed(6)),
        pilot_scored_calls: cal.turns,
        pilot_in_range: Number(cal.in_range),
      });
    }
    for (let k = 1; k <= p.steps; k++) {
      if (ctx.signal.aborted) throw new Error('interrupted');
      const itemId = `step-${pad(k)}`;
      let dir = await ctx.items.get(itemId);
      if (!dir) {
        if (isWorker) worker ??= await openWorkerTrainer(ctx, wo, k - 1);
        const score = shaping ? await openShapingScorer() : undefined;
        const w = worker;
        dir = await ctx.items
          .put(itemId, async (d) => {
            const started = Date.now();
            const policy = makePolicy(k);
            const rollouts: Rollout[] = await runRollouts(
              plan(pickBatch(train, p.batch_size, k, p.seed), p.group_size, k, policy),
              ctx.log,
            );
            if (ctx.signal.aborted) throw new Error('interrupted');
            const exact = worker
              ? { tokenizer: worker.tokenizer, lossAggMode: p.loss_agg_mode, advantageLevel: p.advantage_level }
              : undefined;
            // Scored before the update: on the policy's worker, the weights that sampled them (π_old).
            let shaped: StepShaping | undefined;
            if (shaping)
              shaped = shapeStep(
                rollouts,
                await scoreRollouts(rollouts, bank!, shaping, score!, `${p.seed}:${k}`, ctx.signal),
                shaping,
                beta!,
                `${p.seed}:${k}`,
              );
            const turnRewards = shaped && new Map([...shaped.trajectories].map(([id, v]) => [id, v.rewards]));
            const lrK = learningRate(k - 1, p.steps, lr, p.schedule, 0);
            const batch = buildBatch(k, rollouts, {
              advantage: p.advantage,
              maskTimeouts: p.mask_timeouts,
              timeoutRule: p.timeout_rule,
              std: p.std,
              groupSize: p.group_size,
              hyper: { ...hyper, lr: lrK },
              exact,
              shaped: turnRewards,
            });
            let update: Record<string, unknown>;
            if (worker) {
              update = await worker.step(batch, k, ctx.signal);
              await writeFile(join(d, 'update.json'), JSON.stringify(update) + '\n');
            } else {
              const next: TemplateCheckpoint = structuredClone(ck);
              update = {
                ...templateUpdate(next, templateSamples(batch, rollouts), {
                  lr: lrK,
                  clipLow: p.clip.low,
                  clipHigh: p.clip.high,
                  kl: p.kl,
                  epochs: p.epochs,
                  reference,
                }),
              };
              ck = next;
            }
            const metrics: Record<string, unknown> = {
              ...stepMetrics(k, rollouts, batch),
              lr: lrK,
              ...Object.fromEntries(Object.entries(update).filter(([, v]) => typeof v === 'number')),
            };
            if (p.eval_every > 0 && (k % p.eval_every === 0 || k === p.steps) && val.length) {
              const vr = await runRollouts(plan(val, 1, k, makePolicy(k), `step${k}`, scaffolds.val), ctx.log);
              Object.assign(metrics, valMetrics(vr));
              await writeFile(join(d, 'val.jsonl'), vr.map((r) => JSON.stringify(r)).join('\n') + '\n');
            }
            if (shaped) {
              // Solutions verified in this step join the bank for the next one.
              const done = rollouts.filter((r): r is Trajectory => !isCrashed(r));
              const added = bank!.addVerified(done, 'rl', k, await summaries!.write(done));
              Object.assign(metrics, shaped.metrics, { bank_size: bank!.size(), bank_added: added });
              const records = Object.fromEntries([...shaped.trajectories].map(([id, v]) => [id, v]));
              await writeFile(
                join(d, 'shaping.json'),
                JSON.stringify(
                  { step: k, kind: shaping!.kind, beta, references: shaped.references, trajectories: records },
                  null,
                  1,
                ) + '\n',
              );
              await writeFile(join(d, 'bank.json'), JSON.stringify(bank!.entries()) + '\n');
            }
            metrics.seconds = Number(((Date.now() - started) / 1000).toFixed(1));
            const withShaping = (r: Rollout) => {
              const s = shaped?.trajectories.get(`${r.group_id}#${r.sample}`);
              return s ? { ...r, shaping: { kind: shaping!.kind, beta, turns: s.turns, rewards: s.rewards } } : r;
            };
            await writeFile(
              join(d, 'trajectories.jsonl'),
              rollouts.map((r) => JSON.stringify(withShaping(r))).join('\n') + '\n',
            );
            await writeFile(
              join(d, 'advantages.json'),
              JSON.stringify(
                { groups: batch.groups, trajectories: batch.trajectories.map(({ messages: _m, ...t }) => t) },
                null,
                1,
              ) + '\n',
            );
            await writeFile(join(d, 'step.json'), JSON.stringify(metrics) + '\n');
            if (!isWorker) await writeFile(join(d, 'checkpoint.json'), JSON.stringify(ck) + '\n');
          })
          .catch(async (err: unknown) => {
            throw w ? await w.failure(k, err) : err;
          });
        await worker?.recorded(k);
      } else {
        ctx.log(`step ${k}: finished by an earlier attempt; its checkpoint is reused`);
      }
      // The policy after this step, as it was saved (on resume, the last finished step's).
      if (!isWorker) ck = JSON.parse(await readFile(join(dir, 'checkpoint.json'), 'utf8')) as TemplateCheckpoint;
      if (shaping) {
        bank = new SolutionBank(
          JSON.parse(await readFile(join(dir, 'bank.json'), 'utf8')) as ConstructorParameters<typeof SolutionBank>[0],
        );
        await mkdir(join(ctx.outDir, 'shaping'), { recursive: true });
        await cp(join(dir, 'shaping.json'), join(ctx.outDir, 'shaping', `step_${pad(k)}.json`));
      }
      curve.push(JSON.parse(await readFile(join(dir, 'step.json'), 'utf8')) as Record<string, number | null>);
      const last = curve[curve.length - 1];
      trainLog.write(last);
      ctx.log(
        `step ${k}/${p.steps}: reward ${last.reward_mean} ± ${last.reward_std}, valid ${last.valid_rate}${last.val_reward !== undefined ? `, val reward ${last.val_reward}` : ''}`,
      );
      ctx.progress(k, p.steps);
      await mkdir(join(ctx.outDir, 'steps'), { recursive: true });
      await cp(join(dir, 'trajectories.jsonl'), join(ctx.outDir, 'steps', `step_${pad(k)}.jsonl`));
      if (!isWorker && (k % p.checkpoint_every === 0 || k === p.steps)) {
        await mkdir(join(ctx.outDir, 'checkpoints'), { recursive: true });
        await cp(join(dir, 'checkpoint.json'), join(ctx.outDir, 'checkpoints', `step_${pad(k)}.json`));
      }
    }
    if (isWorker) {
      const last = await ctx.items.get(`step-${pad(p.steps)}`);
      const update = JSON.parse(await readFile(join(last!, 'update.json'), 'utf8')) as { saved?: string };
      await publishCheckpoint(ctx, wo, { k: p.steps, saved: update.saved });
    }
  } finally {
    await Promise.all([sandbox.shutdown(), worker?.stop(), scorer?.stop(), summaries?.stop(), trainLog?.close()]);
  }
  if (bank) await writeFile(join(ctx.outDir, 'bank.json'), JSON.stringify(bank.entries(), null, 1) + '\n');
  await writeFile(join(ctx.outDir, 'metrics.jsonl'), curve.map((m) => JSON.stringify(m)).join('\n') + '\n');
  await writeFile(join(ctx.outDir, 'rows.json'), JSON.stringify({ curve }, null, 1) + '\n');
  if (!isWorker) await writeFile(join(ctx.outDir, 'checkpoint.json'), JSON.stringify(ck) + '\n');
  const quarter = Math.max(1, Math.floor(curve.length / 4));
  const r = (xs: Array<Record<string, number | null>>, key: string) =>
    Number(mean(xs.map((m) => m[key] ?? 0)).toFixed(4));
  const metrics: Metrics = {
    steps: curve.length,
    reward_first: r(curve.slice(0, quarter), 'reward_mean'),
    reward_last: r(curve.slice(-quarter), 'reward_mean'),
    valid_first: r(curve.slice(0, quarter), 'valid_rate'),
    valid_last: r(curve.slice(-quarter), 'valid_rate'),
    entropy_last: curve[curve.length - 1].entropy ?? null,
    ...pilot,
    ...(shaping ? shapingSummary(curve, beta, bank!, quarter) : {}),
  };
  const lastVal = [...curve].reverse().find((m) => m.val_reward !== undefined);
  if (lastVal)
    Object.assign(metrics, {
      val_reward: lastVal.val_reward,
      val_valid: lastVal.val_valid,
      val_any_medal: lastVal.val_any_medal,
      val_crashes: lastVal.val_crashes,
    });
  return { metrics };
}
