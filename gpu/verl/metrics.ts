// verl's metrics file (its `file` logger: one JSON line per step,
// {"step": N, "data": {NAME: value}}) in the shape of the local trainer's
// metrics.jsonl, so tables and figures read a verl run like any other. verl
// 0.9.1 reports the training reward (critic/score/*), the policy's entropy and
// the turns per step; the reward function's variables (mlepipe_NAME) only on
// validation steps (val-aux/SOURCE/mlepipe_NAME/mean@N). What it does not
// report is null. Besides, the largest reward, the update's gradient norm and
// how far the rollout's log-probabilities were from the actor's.
import { type Check, parseJsonl } from '../../core/json-files.js';

/** How a damaged line is named: the file verl writes under the node's output. */
const METRICS_FILE = 'metrics.jsonl';

interface VerlLine {
  step: number;
  data: Record<string, unknown>;
}

const isVerlLine: Check = (v) => {
  const l = v as Partial<VerlLine> | null;
  return typeof l?.step === 'number' && typeof l.data === 'object' && l.data !== null
    ? undefined
    : 'expected {"step": N, "data": {...}}';
};

const pick = (d: Record<string, unknown>, ...names: string[]): number | null => {
  for (const n of names)
    if (typeof d[n] === 'number' && Number.isFinite(d[n])) return Number((d[n] as number).toFixed(4));
  return null;
};

/** A value as verl logged it, not rounded. */
const exact = (d: Record<string, unknown>, name: string): number | null =>
  typeof d[name] === 'number' && Number.isFinite(d[name]) ? (d[name] as number) : null;

const VAL = 'val-aux/mlepipe/mlepipe_';

export function verlCurve(raw: string): Array<Record<string, number | null>> {
  const out = [];
  for (const { step, data } of parseJsonl<VerlLine>(raw, METRICS_FILE, isVerlLine)) {
    const row: Record<string, number | null> = {
      step,
      reward_mean: pick(data, 'critic/score/mean'),
      reward_std: null,
      valid_rate: null,
      median_rate: null,
      bronze_rate: null,
      silver_rate: null,
      gold_rate: null,
      format: null,
      turns: pick(data, 'num_turns/mean'),
      timeouts: null,
      crashes: null,
      masked: null,
      zero_signal_groups: null,
      entropy: pick(data, 'actor/entropy'),
      reward_max: pick(data, 'critic/score/max'),
      grad_norm: exact(data, 'actor/grad_norm'),
      // How far the rollout's log-probabilities of the sampled tokens are from the actor's before its update: near 0
      // when verl's weight sync put the last update into the rollout engine (unrounded: they are 1e-4 and less).
      rollout_probs_diff_max: exact(data, 'training/rollout_probs_diff_max'),
      rollout_probs_diff_mean: exact(data, 'training/rollout_probs_diff_mean'),
      rollout_k3_kl: exact(data, 'rollout_corr/k3_kl'),
    };
    const valReward = pick(data, 'val-core/mlepipe/reward/mean@1');
    if (valReward !== null)
      Object.assign(row, {
        val_reward: valReward,
        val_valid: pick(data, `${VAL}execute/mean@1`),
        val_any_medal: pick(data, `${VAL}bronze/mean@1`),
      });
    out.push(row);
  }
  return out;
}

/** verl's SFT trainer's metrics file as the sft stage's curve: one row per step, its epoch, losses and tokens. */
export function sftCurve(raw: string, stepsPerEpoch: number): Array<Record<string, number | null>> {
  const rows = new Map<number, Record<string, number | null>>();
  for (const { step, data } of parseJsonl<VerlLine>(raw, METRICS_FILE, isVerlLine)) {
    // Validation is logged as a line of its own at the step it follows.
    const row = rows.get(step) ?? {
      epoch: Math.ceil(step / stepsPerEpoch),
      step,
      train_loss: null,
      val_loss: null,
      tokens: null,
      lr: null,
      grad_norm: null,
    };
    row.train_loss = pick(data, 'train/loss') ?? row.train_loss;
    row.val_loss = pick(data, 'val/loss') ?? row.val_loss;
    row.tokens = pick(data, 'train/global_tokens') ?? row.tokens;
    // Not rounded: a learning rate of 1e-5 is 0 at four decimals.
    row.lr = typeof data['train/lr'] === 'number' ? data['train/lr'] : row.lr;
    row.grad_norm = pick(data, 'train/grad_norm') ?? row.grad_norm;
    rows.set(step, row);
  }
  return [...rows.values()].sort((a, b) => a.step! - b.step!);
}
