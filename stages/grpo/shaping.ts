// Turn-level shaping inside the grpo stage: the scorer (the policy's own
// worker, a worker entry, or an OpenAI-compatible server's prompt
// log-probabilities), the solution bank (seeded from verified demonstrations
// upstream, grown from the steps' verified rollouts; its summaries written
// procedurally or by a model), the per-step scores with the shuffle control,
// and the records the node keeps.
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  isVerified,
  reduceSummary,
  SolutionBank,
  type BankEntry,
  type WrittenSummary,
} from '../../agents/shaping/bank.js';
import { modelSummary } from '../../agents/shaping/summarizer.js';
import {
  calibrateBeta,
  DEFAULT_KAPPA,
  shapedRewards,
  shuffleScores,
  type Calibration,
} from '../../agents/shaping/returns.js';
import { promptScorer } from '../../agents/shaping/prompt-scorer.js';
import { spiceTurns } from '../../agents/shaping/spice.js';
import { tipsTurns } from '../../agents/shaping/tips.js';
import { spanTokens, type Scorer, type TurnScore } from '../../agents/shaping/types.js';
import type { Trajectory } from '../../agents/trajectory.js';
import { LlmClient } from '../../agents/llm/client.js';
import { TrainerClient } from '../../gpu/trainer/client.js';
import type { StageContext } from '../contract.js';
import type { TaskRef } from '../shared/tasks.js';
import { canonicalJson, sha256 } from '../../core/hash.js';
import { trajectoryFiles } from '../../agents/trajectory-files.js';
import { serveModel, type ServedModel } from '../shared/worker.js';
import { isCrashed, type Rollout } from './batch.js';
import type { ShapingParams } from './index.js';

/** Items per /score request: large enough to amortise the round trip, small enough to keep memory flat. */
const SCORE_CHUNK = 32;

/**
 * A trainer worker's /score as a Scorer, an overflowing item as null. A reply as text is tokenised by the
 * worker after its prefix; sampled ids are teacher-forced whole and the call's tokens picked by offset.
 */
export function workerScorer(client: TrainerClient, maxLength: number): Scorer {
  return {
    async score(items, signal) {
      const out: Array<number[] | null> = [];
      for (let i = 0; i < items.length; i += SCORE_CHUNK) {
        const chunk = items.slice(i, i + SCORE_CHUNK);
        const part = chunk.map((it) =>
          it.sampled
            ? { messages: it.messages, token_ids: it.sampled }
            : { messages: it.messages, reply: it.reply, ...(it.prefix ? { prefix: it.prefix } : {}) },
        );
        const res = await client.score(
          part,
          { max_length: maxLength, offsets: chunk.some((it) => it.sampled) },
          signal,
        );
        res.forEach((r, j) => {
          const it = chunk[j];
          if (r.overflow) return void out.push(null);
          if (!it.sampled || !r.offsets) return void out.push(r.logprobs);
          const from = (it.prefix ?? '').length;
          const [a, b] = spanTokens(r.offsets, from, from + it.reply.length);
          out.push(b > a ? r.logprobs.slice(a, b) : null);
        });
      }
      return out;
    },
  };
}

export interface OpenScorer {
  scorer: Scorer;
  stop(): Promise<void>;
}

/**
 * `scorer: worker` scores on the policy's worker (its weights before the step's update: π_old); a
 * provider: worker entry gets its own worker; an openai entry is asked for prompt log-probabilities on its
 * completions endpoint (or, with `scorer_api: score`, is a running trainer worker reached through /score).
 */
export async function openScorer(
  ctx: StageContext<unknown>,
  s: ShapingParams,
  policyWorker?: TrainerClient,
): Promise<OpenScorer> {
  if (s.scorer === 'worker') {
    if (!policyWorker) throw new Error('scorer: worker needs the policy on a trainer worker');
    return { scorer: workerScorer(policyWorker, s.max_length), stop: async () => {} };
  }
  const spec = ctx.models[s.scorer];
  if (spec.provider === 'openai' && (s.scorer_api ?? 'completions') === 'completions') {
    const client = new LlmClient({ name: s.scorer, spec, log: ctx.log });
    return {
      scorer: promptScorer(client, { template: s.template ?? 'chatml', maxLength: s.max_length }),
      stop: async () => {},
    };
  }
  const served: ServedModel = await serveModel(ctx, s.scorer, { ckptDir: join(ctx.items.root, 'scorer-checkpoints') });
  const client = served.trainer ?? new TrainerClient((served.spec.base_url ?? '').replace(/\/v1\/?$/, ''));
  return { scorer: workerScorer(client, s.max_length), stop: () => served.stop() };
}

/**
 * Summaries for the bank: procedural, or written by `shaping.summarizer`. A model's summary of a trajectory
 * is an item of the node (keyed by the trajectory's content), so a resumed node does not ask again; the
 * model is opened on the first trajectory that has none.
 */
export interface Summaries {
  /** Writes (or reads back) the summaries of the verified trajectories; the bank looks them up. */
  write(trajectories: readonly Trajectory[]): Promise<(t: Trajectory) => WrittenSummary | undefined>;
  stop(): Promise<void>;
}

export function openSummaries(ctx: StageContext<unknown>, s: ShapingParams, tasks: readonly TaskRef[]): Summaries {
  const name = s.summarizer;
  if (!name) return { write: async () => () => undefined, stop: async () => {} };
  let served: Promise<ServedModel> | undefined;
  let client: Promise<LlmClient> | undefined;
  const open = () => {
    served ??= serveModel(ctx, name, { ckptDir: join(ctx.items.root, 'summarizer-checkpoints') });
    return (client ??= served.then(
      (m) => new LlmClient({ name, spec: m.spec, cacheDir: join(ctx.cacheRoot, 'llm'), log: ctx.log }),
    ));
  };
  const descriptions = new Map<string, Promise<string>>();
  const description = (id: string) => {
    const dir = tasks.find((t) => t.id === id)?.dir;
    if (!descriptions.has(id))
      descriptions.set(
        id,
        dir ? readFile(join(dir, 'public', 'description.md'), 'utf8').catch(() => '') : Promise.resolve(''),
      );
    return descriptions.get(id)!;
  };
  return {
    async write(trajectories) {
      // As many requests at once as the model's concurrency allows (the client queues the rest).
      const written = await Promise.all(
        trajectories.filter(isVerified).map(async (t) => {
          const id = `summary-${sha256(canonicalJson({ task_id: t.task_id, messages: t.messages, turns: t.turns })).slice(0, 24)}`;
          let dir = await ctx.items.get(id);
          if (!dir) {
            const w = await modelSummary(await open(), name, t, await description(t.task_id), ctx.signal);
            if (w.fallback)
              ctx.log(`summary of ${t.group_id}#${t.sample} (${t.task_id}) written procedurally: ${w.fallback}`);
            dir = await ctx.items.put(id, (d) => writeFile(join(d, 'summary.json'), JSON.stringify(w) + '\n'));
          }
          return [t, JSON.parse(await readFile(join(dir, 'summary.json'), 'utf8')) as WrittenSummary] as const;
        }),
      );
      const byTrajectory = new Map<Trajectory, WrittenSummary>(written);
      return (t) => byTrajectory.get(t);
    },
    stop: async () => {
      // A worker that failed to start has nothing to stop.
      if (served) await (await served.catch(() => undefined))?.stop();
    },
  };
}

/** The bank at the start: verified trajectories of upstream nodes (demonstrations) on the tasks trained on. */
export async function seedBank(
  ctx: StageContext<unknown>,
  train: readonly TaskRef[],
  summaries: Summaries,
): Promise<SolutionBank> {
  const bank = new SolutionBank();
  const ids = new Set(train.map((t) => t.id));
  for (const input of ctx.inputs) {
    for (const { file } of trajectoryFiles(input.dir)) {
      const rows = (await readFile(file, 'utf8'))
        .split('\n')
        .filter((l) => l.trim())
        .map((l) => JSON.parse(l) as Rollout);
      const demos = rows.filter((r): r is Trajectory => !isCrashed(r) && ids.has(r.task_id));
      bank.addVerified(demos, 'demonstration', 0, await summaries.write(demos));
    }
  }
  return bank;
}

export interface TurnShaping extends TurnScore {
  /** β·d after the shuffle control (0 when unscored). */
  shaping: number;
}

export interface StepShaping {
  /** Per trajectory id: its scored calls, and r_{i,s} (the shaping plus the outcome at the end). */
  trajectories: Map<string, { turns: TurnShaping[]; rewards: number[] }>;
  /** The references each task was scored against (frozen for the step). */
  references: Record<string, BankEntry[]>;
  metrics: Record<string, number | null>;
}

/** Raw d of every rollout's tool calls against the bank's draw for its task; crashed rollouts get none. */
export async function scoreRollouts(
  rollouts: readonly Rollout[],
  bank: SolutionBank,
  s: ShapingParams,
  scorer: Scorer,
  seed: string,
  signal: AbortSignal,
) {
  const references: Record<string, BankEntry[]> = {};
  const scores = new Map<string, TurnScore[]>();
  for (const r of rollouts) {
    if (isCrashed(r)) continue;
    references[r.task_id] ??= bank.draw(r.task_id, s.references, seed);
    const texts = references[r.task_id].map((e) => (s.summaries === 'reduced' ? reduceSummary(e.text) : e.text));
    // The policy's own worker shares its tokenizer: SPICE then teacher-forces the sampled ids themselves.
    const turns =
      s.kind === 'tips'
        ? await tipsTurns(r, texts, scorer, signal)
        : await spiceTurns(r, texts, scorer, signal, s.scorer === 'worker');
    scores.set(`${r.group_id}#${r.sample}`, turns);
  }
  return { references, scores };
}

/** The step's shaping: scores (shuffled under the control), scaled by β, and each trajectory's turn rewards. */
export function shapeStep(
  rollouts: readonly Rollout[],
  scored: Awaited<ReturnType<typeof scoreRollouts>>,
  s: ShapingParams,
  beta: number,
  seed: string,
): StepShaping {
  const flat = [...scored.scores].flatMap(([id, list]) =>
    list.map((t) => ({ ...t, id, task_id: taskOf(rollouts, id) })),
  );
  const used = s.shuffle ? shuffleScores(flat, seed) : flat;
  const trajectories: StepShaping['trajectories'] = new Map();
  for (const r of rollouts) {
    if (isCrashed(r)) continue;
    const id = `${r.group_id}#${r.sample}`;
    const turns = used
      .filter((t) => t.id === id)
      .map(({ id: _i, task_id: _t, ...t }) => ({ ...t, shaping: t.d === null ? 0 : beta * t.d }));
    trajectories.set(id, { turns, rewards: shapedRewards(r.reward ?? 0, Math.max(1, r.turns.length), turns, beta) });
  }
  return { trajectories, references: scored.references, metrics: shapingMetrics(used, beta) };
}

/** A step's shaping figures over its scored calls (the worker's and verl's curves alike). */
export function shapingMetrics(used: readonly TurnScore[], beta: number): Record<string, number | null> {
  const scoredTurns = used.filter((t) => t.d !== null);
  const r4 = (x: number) => Number(x.toFixed(6));
  return {
    shaping_calls: used.length,
    shaping_scored: scoredTurns.length,
    shaping_mean_abs: scoredTurns.length
      ? r4(scoredTurns.reduce((a, t) => a + Math.abs(beta * (t.d as number)), 0) / scoredTurns.length)
      : 0,
    shaping_mean_d: scoredTurns.length
      ? r4(scoredTurns.reduce((a, t) => a + (t.d as number), 0) / scoredTurns.length)
      : 0,
    // Unscaled |d| by action type: the feedback magnitudes MLToolBench's Fig. 4 compares.
    score_abs_diagnostic: meanAbs(
      scoredTurns.filter((t) => t.category === 'diagnostic'),
      1,
    ),
    score_abs_execution: meanAbs(
      scoredTurns.filter((t) => t.category === 'execution'),
      1,
    ),
    beta: r4(beta),
  };
}

/** Mean |β·d|, or null when no call of that kind was scored (no calls is not a zero score). */
const meanAbs = (xs: readonly TurnScore[], beta: number) =>
  xs.length ? Number((xs.reduce((a, t) => a + Math.abs(beta * (t.d as number)), 0) / xs.length).toFixed(6)) : null;

const taskOf = (rollouts: readonly Rollout[], id: string) =>
  rollouts.find((r) => `${r.group_id}#${r.sample}` === id)?.task_id ?? '';

/**
 * The pilot (App. D.2): `pilot_steps` batches of rollouts with the initial policy on training tasks,
 * scored against the starting bank by the initial snapshot; β = κ / (m̂ + ε). Not trained on. Its
 * rollouts and calibration are an item of their own, so a rerun reuses them.
 */
export async function pilotBeta(
  ctx: StageContext<unknown>,
  s: ShapingParams,
  o: { bank: SolutionBank; scorer: () => Promise<Scorer>; rollouts: (j: number) => Promise<Rollout[]> },
): Promise<Calibration> {
  let dir = await ctx.items.get('pilot');
  if (!dir) {
    const scorer = await o.scorer();
    dir = await ctx.items.put('pilot', async (d) => {
      const rollouts: Rollout[] = [];
      for (let j = 1; j <= s.pilot_steps; j++) rollouts.push(...(await o.rollouts(j)));
      const scored = await scoreRollouts(rollouts, o.bank, s, scorer, 'pilot', ctx.signal);
      const ds = [...scored.scores.values()].flat().flatMap((t) => (t.d === null ? [] : [t.d]));
      const cal = calibrateBeta(ds, s.kappa ?? DEFAULT_KAPPA);
      if (!cal) {
        // Say why none was scored: no call parsed at all points at the policy, unscored calls at the bank or the length.
        const calls = [...scored.scores.values()].flat();
        const why = (r: string) => calls.filter((t) => t.reason === r).length;
        throw new Error(
          `the pilot's ${rollouts.length} rollouts had no scored tool call (${calls.length} calls parsed, ${why('no-reference')} on tasks without a reference, ` +
            `${why('overflow')} over max_length; ${o.bank.size()} summaries in the solution bank): ` +
            'nothing to calibrate beta on; give shaping.beta, or demonstrations with verified solutions in needs:',
        );
      }
      await writeFile(join(d, 'pilot.jsonl'), rollouts.map((r) => JSON.stringify(r)).join('\n') + '\n');
      await writeFile(join(d, 'calibration.json'), JSON.stringify(cal, null, 1) + '\n');
    });
  }
  const cal = JSON.parse(await readFile(join(dir, 'calibration.json'), 'utf8')) as Calibration;
  await writeFile(join(ctx.outDir, 'calibration.json'), JSON.stringify(cal, null, 1) + '\n');
  ctx.log(
    `shaping pilot: ${cal.turns} scored calls, mean |d| ${cal.m_hat.toPrecision(4)}, beta ${cal.beta.toPrecision(4)}: mean |beta·d| ${cal.mean_abs_shaping.toFixed(4)} in [${cal.range.join(', ')}]`,
  );
  return cal;
}

/** The node's shaping metrics: β, the last quarter's mean |β·d|, the bank's size, unscaled |d| by action type over all steps. */
export function shapingSummary(
  curve: ReadonlyArray<Record<string, number | null>>,
  beta: number | undefined,
  bank: SolutionBank,
  quarter: number,
): Record<string, number | null> {
  const avg = (xs: ReadonlyArray<Record<string, number | null>>, key: string) => {
    const v = xs.map((m) => m[key]).filter((x): x is number => typeof x === 'number');
    return v.length ? Number((v.reduce((a, x) => a + x, 0) / v.length).toFixed(6)) : null;
  };
  const diag = avg(curve, 'score_abs_diagnostic');
  const exec = avg(curve, 'score_abs_execution');
  return {
    beta: beta ?? null,
    shaping_mean_abs_last: avg(curve.slice(-quarter), 'shaping_mean_abs'),
    bank_size: bank.size(),
    score_abs_diagnostic: diag,
    score_abs_execution: exec,
    diagnostic_over_execution: diag !== null && exec ? Number((diag / exec).toFixed(4)) : null,
  };
}
