// One training step's numbers (metrics.jsonl, the training curves).
import { mean, std } from '../../core/stats.js';
import type { Batch, Rollout } from './batch.js';
import { isCrashed } from './batch.js';

export function stepMetrics(step: number, rollouts: readonly Rollout[], batch: Batch): Record<string, number | null> {
  const ok = rollouts.filter((r) => !isCrashed(r)) as Extract<Rollout, { variables: unknown }>[];
  const rewards = batch.trajectories.map((t) => t.reward);
  const m = (rate: (v: Record<string, number>) => number) => (ok.length ? mean(ok.map((t) => rate(t.variables))) : 0);
  // Replies cut by the length limit carry no action and no signal: a rate that rises says max_tokens is too low.
  const sampled = ok.flatMap((t) => t.turns.flatMap((x) => (x.tokens ? [x.tokens.finish_reason] : [])));
  const entropies = ok.flatMap((t) =>
    t.turns.map((x) => x.choice?.entropy).filter((e): e is number => e !== undefined),
  );
  const r = (x: number) => Number(x.toFixed(4));
  return {
    step,
    reward_mean: r(mean(rewards)),
    reward_std: r(std(rewards)),
    valid_rate: r(m((v) => v.execute)),
    median_rate: r(m((v) => v.median)),
    bronze_rate: r(m((v) => v.bronze)),
    silver_rate: r(m((v) => v.silver)),
    gold_rate: r(m((v) => v.gold)),
    format: r(m((v) => v.format)),
    turns: r(m((v) => v.turns)),
    timeouts: ok.filter((t) => t.variables.timed_out === 1).length,
    crashes: rollouts.length - ok.length,
    masked: batch.trajectories.filter((t) => t.masked).length,
    zero_signal_groups: batch.groups.filter((g) => g.zero_signal).length,
    entropy: entropies.length ? r(mean(entropies)) : null,
    truncated_rate: sampled.length ? r(sampled.filter((f) => f === 'length').length / sampled.length) : null,
  };
}

/**
 * A validation pass's rates over every validation rollout: a crashed one
 * counts as no reward, not valid and no medal (leaving it out would let a
 * policy that crashes on the hard tasks look better), and val_crashes says
 * how many there were.
 */
export function valMetrics(rollouts: readonly Rollout[]): {
  val_reward: number;
  val_valid: number;
  val_any_medal: number;
  val_crashes: number;
} {
  const r = (x: number) => Number(x.toFixed(4));
  const over = (f: (t: Extract<Rollout, { variables: unknown }>) => number) =>
    r(rollouts.length ? mean(rollouts.map((t) => (isCrashed(t) ? 0 : f(t)))) : 0);
  return {
    val_reward: over((t) => t.reward ?? 0),
    val_valid: over((t) => t.variables.execute),
    val_any_medal: over((t) => t.variables.bronze),
    val_crashes: rollouts.filter(isCrashed).length,
  };
}
