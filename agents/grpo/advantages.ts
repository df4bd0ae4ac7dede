// Advantages for trajectory-wise GRPO (SandMLE §3.4.4; docs/training.md).
// `grpo`: (R − mean) / (std + ε) within the group; `drgrpo`: R − mean (no
// std scaling, Dr. GRPO). Masked trajectories (timed out under `drop`, or
// crashed) take no part in the group's baseline and get no loss. A group
// whose rewards are all equal has no signal: every advantage is 0.
// Turn-level returns G_{i,s} − mean_i G_{i,1} are computed for later
// turn-level shaping (SPICE, TIPS); with outcome rewards only they equal the
// trajectory advantage's numerator at every turn.

import { mean as meanOf, std as populationStd } from '../../core/stats.js';

export const EPSILON = 1e-6;

export interface GroupMember {
  reward: number;
  timedOut: boolean;
  /** The rollout itself failed (sandbox or scaffold error): never trained on. */
  crashed?: boolean;
  /** Per-turn rewards (shaping); when absent, the whole reward arrives at the last turn. */
  turnRewards?: number[];
  turns?: number;
}

export interface Advantage {
  advantage: number;
  masked: boolean;
  /** Why it is masked: timed_out | crashed. */
  reason?: 'timed_out' | 'crashed';
}

export function groupAdvantages(group: readonly GroupMember[], opts: { estimator: 'grpo' | 'drgrpo'; maskTimeouts: 'drop' | 'keep' }): { members: Advantage[]; mean: number; std: number; zeroSignal: boolean } {
  const masked = group.map((m) => (m.crashed ? 'crashed' : m.timedOut && opts.maskTimeouts === 'drop' ? 'timed_out' : undefined));
  const kept = group.filter((_, i) => !masked[i]).map((m) => m.reward);
  const mean = kept.length ? meanOf(kept) : 0;
  const std = populationStd(kept);
  const zeroSignal = kept.length < 2 || kept.every((r) => r === kept[0]);
  const members = group.map((m, i): Advantage => {
    if (masked[i]) return { advantage: 0, masked: true, reason: masked[i] as Advantage['reason'] };
    if (zeroSignal) return { advantage: 0, masked: false };
    const centred = m.reward - mean;
    return { advantage: opts.estimator === 'grpo' ? centred / (std + EPSILON) : centred, masked: false };
  });
  return { members, mean, std, zeroSignal };
}

/** G_{i,s}: the return from turn s to the end (undiscounted). */
export function returnsToGo(turnRewards: readonly number[]): number[] {
  const out = new Array<number>(turnRewards.length).fill(0);
  let acc = 0;
  for (let s = turnRewards.length - 1; s >= 0; s--) {
    acc += turnRewards[s];
    out[s] = acc;
  }
  return out;
}

/**
 * Turn-level advantages G_{i,s} − mean_i G_{i,1} over the group's unmasked
 * members (index 0 is the first turn). Masked members get zeros.
 */
export function turnAdvantages(group: readonly GroupMember[], maskedFlags: readonly boolean[]): number[][] {
  const perTurn = group.map((m) => m.turnRewards ?? [...new Array(Math.max(0, (m.turns ?? 1) - 1)).fill(0), m.reward]);
  const returns = perTurn.map(returnsToGo);
  const firsts = returns.filter((_, i) => !maskedFlags[i]).map((g) => g[0] ?? 0);
  const baseline = firsts.length ? meanOf(firsts) : 0;
  return returns.map((g, i) => (maskedFlags[i] ? g.map(() => 0) : g.map((x) => x - baseline)));
}
