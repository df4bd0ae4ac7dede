// One step's shaping: every rollout's tool calls scored against the bank's references for its task, the
// shuffle control, and the per-turn rewards the batch's advantages are built from.
import { reduceSummary, type BankEntry, type SolutionBank } from '../../../agents/shaping/bank.js';
import { shapedRewards, shuffleScores } from '../../../agents/shaping/returns.js';
import { spiceTurns } from '../../../agents/shaping/spice.js';
import { tipsTurns } from '../../../agents/shaping/tips.js';
import type { Scorer, TurnScore } from '../../../agents/shaping/types.js';
import { isCrashed, type Rollout } from '../batch.js';
import type { ShapingParams } from '../index.js';
import { shapingMetrics } from './metrics.js';

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

export interface ScoredRollouts {
  references: Record<string, BankEntry[]>;
  /** Raw d of each trajectory's calls, by `group_id#sample`. */
  scores: Map<string, TurnScore[]>;
}

/** Raw d of every rollout's tool calls against the bank's draw for its task; crashed rollouts get none. */
export async function scoreRollouts(
  rollouts: readonly Rollout[],
  bank: SolutionBank,
  s: ShapingParams,
  scorer: Scorer,
  seed: string,
  signal: AbortSignal,
): Promise<ScoredRollouts> {
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
  scored: ScoredRollouts,
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

const taskOf = (rollouts: readonly Rollout[], id: string) =>
  rollouts.find((r) => `${r.group_id}#${r.sample}` === id)?.task_id ?? '';
