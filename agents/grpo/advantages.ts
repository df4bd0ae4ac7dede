// Advantages for trajectory-wise GRPO (SandMLE §3.4.4; docs/training.md).
// `grpo`: (R − mean) / (std + ε) within the group, std unbiased (n − 1) as
// verl computes it, or the population std on request; `drgrpo`: R − mean (no
// std scaling, Dr. GRPO). Masked trajectories get no loss: crashed ones and,
// under `drop`, timed-out ones take no part in the group's baseline either;
// under `drop-after` timed-out ones count in the baseline and are dropped
// afterwards (as the released SandMLE training code does). A group whose
// rewards are all equal has no outcome signal: every trajectory advantage is 0.
// Turn-level returns G_{i,s} − mean_i G_{i,1} carry turn-level shaping
// (SPICE, TIPS), so they are kept even when the outcomes are all equal; with
// outcome rewards only they equal the trajectory advantage's numerator.

import { mean as meanOf, std as populationStd, sampleStd } from '../../core/stats.js';

export type MaskTimeouts = 'drop' | 'drop-after' | 'keep';
export type StdKind = 'unbiased' | 'population';


export const EPSILON = 1e-6;

/**
 * When a trajectory counts as timed out for masking: `any-step` (the paper: any execution hit τ_max),
 * `fraction:F` (at least that share of its executions did), `last-step` (its last one did). Running out of
 * the episode's time budget counts under every rule.
 */
export type TimeoutRule = 'any-step' | 'last-step' | `fraction:${number}`;

export function timedOutUnder(rule: TimeoutRule, ep: { ended: string; turns: ReadonlyArray<{ action: string; timed_out: boolean }> }): boolean {
  if (ep.ended === 'time_budget') return true;
  const runs = ep.turns.filter((t) => t.action === 'code');
  if (!runs.length) return false;
  if (rule === 'any-step') return runs.some((t) => t.timed_out);
  if (rule === 'last-step') return ep.turns[ep.turns.length - 1]?.action === 'code' && runs[runs.length - 1].timed_out;
  const share = Number(rule.slice('fraction:'.length));
  return runs.filter((t) => t.timed_out).length / runs.length >= share;
}

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

export function groupAdvantages(
  group: readonly GroupMember[],
  opts: { estimator: 'grpo' | 'drgrpo'; maskTimeouts: MaskTimeouts; std?: StdKind },
): { members: Advantage[]; mean: number; std: number; zeroSignal: boolean } {
  const masked = group.map((m) => (m.crashed ? 'crashed' : m.timedOut && opts.maskTimeouts !== 'keep' ? 'timed_out' : undefined));
  // The baseline's members: under drop-after, timed-out trajectories count here and are dropped below.
  const inBaseline = group.filter((m, i) => !masked[i] || (masked[i] === 'timed_out' && opts.maskTimeouts === 'drop-after'));
  const kept = inBaseline.map((m) => m.reward);
  const mean = kept.length ? meanOf(kept) : 0;
  const std = opts.std === 'population' ? populationStd(kept) : sampleStd(kept);
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
