// Turn-level shaping over a run trained step by step: one object owns the solution bank, the scorer, the
// summaries and β, so the step loop asks it for a step's shaping and hands it each finished step.
import { cp, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { SolutionBank, type BankEntry } from '../../../agents/shaping/bank.js';
import type { Scorer } from '../../../agents/shaping/types.js';
import type { Trajectory } from '../../../agents/trajectory.js';
import { InternalError } from '../../../core/errors.js';
import { readJson } from '../../../core/json-files.js';
import type { TrainerClient } from '../../../gpu/trainer/client.js';
import type { StageContext } from '../../contract.js';
import type { TaskRef } from '../../shared/tasks.js';
import { isCrashed, type Rollout } from '../batch.js';
import type { ShapingParams } from '../index.js';
import { seedBank } from './bank.js';
import { shapingSummary } from './metrics.js';
import { pilotBeta } from './pilot.js';
import { openScorer, type OpenScorer } from './scorer.js';
import { scoreRollouts, shapeStep, type StepShaping } from './score.js';
import { openSummaries, type Summaries } from './summaries.js';

export interface ShapingRun {
  ctx: StageContext<unknown>;
  params: ShapingParams;
  /** The stage's seed: step k draws references and shuffles with `${seed}:${k}`. */
  seed: number;
  train: readonly TaskRef[];
  /** The policy's trainer worker, for a scorer on the policy's own weights; asked when the scorer opens. */
  policyWorker: () => Promise<TrainerClient | undefined>;
}

export class ShapingSession {
  private opened?: OpenScorer;
  /** β as written, or once the pilot has calibrated it. */
  private calibrated: number | undefined;

  private constructor(
    private readonly run: ShapingRun,
    private bank: SolutionBank,
    private readonly summaries: Summaries,
  ) {
    this.calibrated = run.params.beta;
  }

  /** A session whose bank holds the verified demonstrations upstream left on the tasks trained on. */
  static async open(run: ShapingRun): Promise<ShapingSession> {
    const summaries = openSummaries(run.ctx, run.params, run.train);
    const bank = await seedBank(run.ctx, run.train, summaries).catch(async (err: unknown) => {
      await summaries.stop();
      throw err;
    });
    run.ctx.log(
      `solution bank: ${bank.size()} verified demonstration summaries for ${run.train.length} training tasks`,
    );
    return new ShapingSession(run, bank, summaries);
  }

  get params(): ShapingParams {
    return this.run.params;
  }

  get beta(): number {
    if (this.calibrated === undefined) throw new InternalError('shaping beta was read before the pilot set it');
    return this.calibrated;
  }

  /** The scorer, opened on first use (under `scorer: worker`, on the policy's worker, which is opened then). */
  async scorer(): Promise<Scorer> {
    this.opened ??= await openScorer(this.run.ctx, this.params, await this.run.policyWorker());
    return this.opened.scorer;
  }

  /** Runs the pilot when β is not written; returns the node's pilot metrics (none when it is written). */
  async calibrate(rollouts: (j: number) => Promise<Rollout[]>): Promise<Record<string, number>> {
    if (this.calibrated !== undefined) return {};
    const cal = await pilotBeta(this.run.ctx, this.params, {
      bank: this.bank,
      scorer: () => this.scorer(),
      rollouts,
    });
    this.calibrated = cal.beta;
    return {
      beta: cal.beta,
      pilot_mean_abs_shaping: Number(cal.mean_abs_shaping.toFixed(6)),
      pilot_scored_calls: cal.turns,
      pilot_in_range: Number(cal.in_range),
    };
  }

  /** Step k's shaping, scored before the update: on the policy's worker, by the weights that sampled them (π_old). */
  async shape(rollouts: readonly Rollout[], k: number): Promise<StepShaping> {
    const seed = `${this.run.seed}:${k}`;
    const scored = await scoreRollouts(
      rollouts,
      this.bank,
      this.params,
      await this.scorer(),
      seed,
      this.run.ctx.signal,
    );
    return shapeStep(rollouts, scored, this.params, this.beta, seed);
  }

  /**
   * After step k's update: its verified solutions join the bank for the next step, and the step's folder
   * keeps its shaping and the bank. Returns the step's shaping metrics.
   */
  async record(dir: string, k: number, rollouts: readonly Rollout[], shaped: StepShaping) {
    const done = rollouts.filter((r): r is Trajectory => !isCrashed(r));
    const added = this.bank.addVerified(done, 'rl', k, await this.summaries.write(done));
    const records = Object.fromEntries(shaped.trajectories);
    const { kind } = this.params;
    const file = { step: k, kind, beta: this.beta, references: shaped.references, trajectories: records };
    await writeFile(join(dir, 'shaping.json'), JSON.stringify(file, null, 1) + '\n');
    await writeFile(join(dir, 'bank.json'), JSON.stringify(this.bank.entries()) + '\n');
    return { ...shaped.metrics, bank_size: this.bank.size(), bank_added: added };
  }

  /** A rollout as trajectories.jsonl keeps it: with its turns' shaping when it was shaped. */
  annotate(r: Rollout, shaped: StepShaping): Rollout & { shaping?: unknown } {
    const s = shaped.trajectories.get(`${r.group_id}#${r.sample}`);
    return s ? { ...r, shaping: { kind: this.params.kind, beta: this.beta, turns: s.turns, rewards: s.rewards } } : r;
  }

  /** Step k is finished (now or by an earlier attempt): the bank as it left it; its shaping in the node's shaping/. */
  async finished(k: number, dir: string): Promise<void> {
    this.bank = new SolutionBank(await readJson<BankEntry[]>(join(dir, 'bank.json')));
    const out = join(this.run.ctx.outDir, 'shaping');
    await mkdir(out, { recursive: true });
    await cp(join(dir, 'shaping.json'), join(out, `step_${String(k).padStart(5, '0')}.json`));
  }

  /** The node's shaping metrics over its curve (`quarter`: the steps in a quarter of the run). */
  summary(curve: ReadonlyArray<Record<string, number | null>>, quarter: number): Record<string, number | null> {
    return shapingSummary(curve, this.calibrated, this.bank, quarter);
  }

  async writeBank(outDir: string): Promise<void> {
    await writeFile(join(outDir, 'bank.json'), JSON.stringify(this.bank.entries(), null, 1) + '\n');
  }

  async stop(): Promise<void> {
    await Promise.all([this.opened?.stop(), this.summaries.stop()]);
  }
}
