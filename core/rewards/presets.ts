// Named reward formulas from the two papers (docs/experiments.md#reward-formulas). A `rewards:` entry or
// a stage's `reward:` may name one of these instead of writing a formula.
export const REWARD_PRESETS: Readonly<Record<string, string>> = {
  /** SandMLE paper, Eq. for the dense milestone reward. */
  'sandmle-paper': '0.1*format + 0.3*execute + 0.1*median + 0.2*bronze + 0.2*silver + 0.1*gold',
  /** SandMLE released code: the best reached milestone counts, not the sum. */
  'sandmle-code': '0.1*format + 0.2*execute + max(0.7*gold, 0.6*silver, 0.5*bronze, 0.1*median)',
  /** SandMLE Table 4 ablation: gold or nothing. */
  sparse: '0.1*format + 0.9*gold',
  /** MLToolBench outcome reward: Eq. 5 success. */
  mltoolbench: 'success',
};

/** The formula text for a name or formula: presets expand, anything else is taken as written. */
export function expandPreset(formulaOrPreset: string): string {
  return REWARD_PRESETS[formulaOrPreset.trim()] ?? formulaOrPreset;
}

/** The formula a stage's `reward:` names: an experiment `rewards:` entry first, then a preset. */
export function rewardFormula(name: string, rewards: Readonly<Record<string, string>>): string | undefined {
  return rewards[name] ?? REWARD_PRESETS[name];
}
