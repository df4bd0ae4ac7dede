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
 * the episode's time budget counts under every rule. `release`: the released SandMLE code's rule
 * (deepresearch_workflow.py, `_convert_to_episode`): more than a fifth of all tool responses, not only
 * executions, were execution timeouts; a failed model call ends the release's episode as a timeout too.
 */
export type TimeoutRule = 'any-step' | 'last-step' | 'release' | `fraction:${number}`;

type MaskedEpisode = {
  ended: string;
  turns: ReadonlyArray<{ turn?: number; action: string; timed_out: boolean; tool_response?: boolean; pruned?: true }>;
  messages?: ReadonlyArray<{ content: string }>;
};

/** The release's denominator: replies a tool response answered (every turn but an answer, outside the release's format). */
// What the release counts is in the conversation it ends with: replies its pruning removed are not.
const kept = (ep: MaskedEpisode) => ep.turns.filter((t) => !t.pruned);
const toolResponses = (ep: MaskedEpisode) => kept(ep).filter((t) => t.tool_response ?? t.action !== 'answer').length;

export function timedOutUnder(rule: TimeoutRule, ep: MaskedEpisode): boolean {
  if (ep.ended === 'time_budget') return true;
  if (rule === 'release') {
    if (ep.ended === 'policy_error') return true;
    const responses = toolResponses(ep);
    // Strictly more than 0.2, as the release compares.
    return responses > 0 && kept(ep).filter((t) => t.action === 'code' && t.timed_out).length / responses > 0.2;
  }
  const runs = ep.turns.filter((t) => t.action === 'code');
  if (!runs.length) return false;
  if (rule === 'any-step') return runs.some((t) => t.timed_out);
  if (rule === 'last-step') return ep.turns[ep.turns.length - 1]?.action === 'code' && runs[runs.length - 1].timed_out;
  const share = Number(rule.slice('fraction:'.length));
  return runs.filter((t) => t.timed_out).length / runs.length >= share;
}

/**
 * An ending the release cannot name (TerminationReason.UNKNOWN), which its training masks (`mask_unknown`).
 * The release's loop (deepresearch_agent.py, `_run`) acts on a reply's tool call, then stops on its answer; the
 * check after the loop reads the answer from the last message, which is then the tool response. Without
 * `<answer>` there, the ending is "answer not found" (unknown) while calls were left, and
 * "token_limit_no_answer" (MAX_RESPONSE_LENGTH_EXCEEDED, kept: `mask_max_response_length_exceeded=False`) when the
 * reply was the last of the `maxTurns` calls. A tool response that holds `<answer>` reads as an answer (kept).
 */
export function unknownEnding(rule: TimeoutRule, ep: MaskedEpisode, maxTurns: number): boolean {
  const last = ep.turns[ep.turns.length - 1];
  if (rule !== 'release' || ep.ended !== 'answer' || !last || last.action === 'answer') return false;
  // The reply's call: its turn's index (a reply is one call), or its place among the turns.
  if ((last.turn ?? ep.turns.length - 1) + 1 >= maxTurns) return false;
  return !ep.messages?.[ep.messages.length - 1]?.content.includes('<answer>');
}

export interface GroupMember {
  reward: number;
  timedOut: boolean;
  /** timeout_rule: release: an unknown ending, masked as timed-out ones are. */
  unknown?: boolean;
  /** The rollout itself failed (sandbox or scaffold error): never trained on. */
  crashed?: boolean;
  /** Per-turn rewards (shaping); when absent, the whole reward arrives at the last turn. */
  turnRewards?: number[];
  turns?: number;
}

export interface Advantage {
  advantage: number;
  masked: boolean;
  /** Why it is masked: timed_out | unknown | crashed. */
  reason?: 'timed_out' | 'unknown' | 'crashed';
}

export function groupAdvantages(
  group: readonly GroupMember[],
  opts: { estimator: 'grpo' | 'drgrpo'; maskTimeouts: MaskTimeouts; std?: StdKind },
): { members: Advantage[]; mean: number; std: number; zeroSignal: boolean } {
  const masked = group.map((m) =>
    m.crashed
      ? 'crashed'
      : opts.maskTimeouts === 'keep'
        ? undefined
        : m.timedOut
          ? 'timed_out'
          : m.unknown
            ? 'unknown'
            : undefined,
  );
  // The baseline's members: under drop-after, timed-out (and unknown) trajectories count here and are dropped below.
  const inBaseline = group.filter(
    (m, i) => !masked[i] || (masked[i] !== 'crashed' && opts.maskTimeouts === 'drop-after'),
  );
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
  const perTurn = group.map(
    (m) => m.turnRewards ?? [...new Array<number>(Math.max(0, (m.turns ?? 1) - 1)).fill(0), m.reward],
  );
  const returns = perTurn.map(returnsToGo);
  const firsts = returns.filter((_, i) => !maskedFlags[i]).map((g) => g[0] ?? 0);
  const baseline = firsts.length ? meanOf(firsts) : 0;
  return returns.map((g, i) => (maskedFlags[i] ? g.map(() => 0) : g.map((x) => x - baseline)));
}
