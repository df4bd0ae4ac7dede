// From turn scores to advantages (MLToolBench Eq. 2–3), the pilot that sets
// the shaping scale (App. D.2, Eq. 8) and the score-shuffle control.
import { Rng } from '../../core/random.js';
import { returnsToGo } from '../grpo/advantages.js';
import type { CallCategory } from './calls.js';
import { mean, type TurnScore } from './types.js';

/**
 * r_s = 1[s = S]·R + β·d_s over a trajectory's S turns: the detached score at its turn's boundary, the
 * outcome at the end. Turns without a score (not calls, unscored calls) add nothing.
 */
export function shapedRewards(outcome: number, turns: number, scores: readonly TurnScore[], beta: number): number[] {
  const r = new Array<number>(Math.max(1, turns)).fill(0);
  for (const s of scores) if (s.d !== null && s.turn < r.length) r[s.turn] += beta * s.d;
  r[r.length - 1] += outcome;
  return r;
}

export interface ShapedMember {
  /** Per-turn rewards r_{i,s}. */
  rewards: readonly number[];
  masked: boolean;
}

/**
 * Â_{i,s} = G_{i,s} − μ_x, μ_x the mean complete return G_{i,1} over the group's unmasked members; no
 * std scaling, and a group whose complete returns are equal still carries its later turns' differences.
 * Masked members get zeros.
 */
export function shapedAdvantages(group: readonly ShapedMember[]): { advantages: number[][]; baseline: number } {
  const returns = group.map((m) => returnsToGo(m.rewards));
  const firsts = returns.filter((_, i) => !group[i].masked).map((g) => g[0]);
  const baseline = firsts.length ? mean(firsts) : 0;
  return { advantages: returns.map((g, i) => g.map((x) => (group[i].masked ? 0 : x - baseline))), baseline };
}

export const CALIBRATION_EPSILON = 1e-8;

export interface Calibration {
  /** The target mean |β·d| (κ·c_R with c_R = 1, the binary outcome's scale). */
  kappa: number;
  range: [number, number];
  /** N: scored tool-call turns of the pilot, and m̂ = mean |d| over them. */
  turns: number;
  m_hat: number;
  beta: number;
  /** The pilot's mean |β·d| with that β: lands at κ whenever m̂ ≫ ε. */
  mean_abs_shaping: number;
  in_range: boolean;
}

/** App. D.2's target range for the pilot's mean |β·d| when the stage gives no kappa. */
export const DEFAULT_KAPPA: [number, number] = [0.05, 0.3];

/**
 * β = κ·c_R / (m̂ + ε) (Eq. 8). With a range, κ is its midpoint, so the pilot's mean |β·d| sits inside
 * it with room either side. No scored turn: nothing to calibrate on (null).
 */
export function calibrateBeta(pilot: readonly number[], kappa: number | readonly [number, number]): Calibration | null {
  if (!pilot.length) return null;
  const range: [number, number] = typeof kappa === 'number' ? [kappa, kappa] : [kappa[0], kappa[1]];
  const target = (range[0] + range[1]) / 2;
  const mHat = mean(pilot.map(Math.abs));
  const beta = target / (mHat + CALIBRATION_EPSILON);
  const shaped = mean(pilot.map((d) => Math.abs(beta * d)));
  return {
    kappa: target,
    range,
    turns: pilot.length,
    m_hat: mHat,
    beta,
    mean_abs_shaping: shaped,
    in_range: shaped >= range[0] - 1e-12 && shaped <= range[1] + 1e-12,
  };
}

export interface ShuffleEntry {
  task_id: string;
  category: CallCategory;
  d: number | null;
}

/**
 * The correspondence control: scored calls' d values permuted among the calls of the same task and tool
 * category (over the step's whole group), so each permutation group keeps its scores and loses which
 * action earned which. Unscored calls stay unscored. Seeded.
 */
export function shuffleScores<T extends ShuffleEntry>(entries: readonly T[], seed: string): T[] {
  const groups = new Map<string, number[]>();
  entries.forEach((e, i) => {
    if (e.d === null) return;
    const key = `${e.task_id}\u0000${e.category}`;
    groups.set(key, [...(groups.get(key) ?? []), i]);
  });
  const out = entries.map((e) => ({ ...e }));
  for (const [key, idx] of groups) {
    const values = new Rng('spice-shuffle', seed, key).shuffle(idx.map((i) => entries[i].d as number));
    idx.forEach((i, j) => (out[i].d = values[j]));
  }
  return out;
}
