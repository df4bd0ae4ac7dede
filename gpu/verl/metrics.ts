// verl's metrics file (its `file` logger: one JSON line per step,
// {"step": N, "data": {NAME: value}}) in the shape of the local trainer's
// metrics.jsonl, so tables and figures read a verl run like any other. The
// reward variables come from the reward function's extra outputs
// (mlepipe_NAME); what verl does not report is null.
const pick = (d: Record<string, unknown>, ...names: string[]): number | null => {
  for (const n of names) if (typeof d[n] === 'number' && Number.isFinite(d[n])) return Number((d[n] as number).toFixed(4));
  return null;
};

export function verlCurve(raw: string): Array<Record<string, number | null>> {
  const out = [];
  for (const line of raw.split('\n')) {
    if (!line.trim()) continue;
    const { step, data } = JSON.parse(line) as { step: number; data: Record<string, unknown> };
    const v = (name: string) => pick(data, `reward_extra_info/mlepipe_${name}/mean`, `reward_extra_info/mlepipe_${name}`, `mlepipe_${name}/mean`);
    out.push({
      step,
      reward_mean: pick(data, 'critic/score/mean', 'critic/rewards/mean'),
      reward_std: pick(data, 'critic/score/std'),
      valid_rate: v('execute'),
      median_rate: v('median'),
      bronze_rate: v('bronze'),
      silver_rate: v('silver'),
      gold_rate: v('gold'),
      format: v('format'),
      turns: v('turns') ?? pick(data, 'num_turns/mean'),
      timeouts: null,
      crashes: null,
      masked: null,
      zero_signal_groups: null,
      entropy: pick(data, 'actor/entropy'),
      val_reward: pick(data, 'val-core/mlepipe/reward/mean@1', 'val-core/mlepipe/acc/mean@1'),
    });
  }
  return out;
}
