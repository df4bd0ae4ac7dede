// Named reward formulas from the two papers (docs/experiments.md#reward-formulas). A `rewards:` entry or
// a stage's `reward:` may name one of these instead of writing a formula.
export const REWARD_PRESETS: Readonly<Record<string, string>> = {
  /** SandMLE paper, Eq. for the dense milestone reward. */
  'sandmle-paper': '0.1*format + 0.3*execute + 0.1*median + 0.2*bronze + 0.2*silver + 0.1*gold',
  /** SandMLE released code: the best reached milestone counts, not the sum. */
  'sandmle-code': '0.1*format + 0.2*execute + max(0.7*gold, 0.6*silver, 0.5*bronze, 0.1*median)',
  /** SandMLE released code, with the inputs it reads (REWARD_INPUTS): the same formula as sandmle-code. */
  'sandmle-release': '0.1*format + 0.2*execute + max(0.7*gold, 0.6*silver, 0.5*bronze, 0.1*median)',
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

/**
 * What a reward reads besides its formula (docs/training.md#reward-inputs):
 * which submission is scored, how `format` counts replies, and what a null
 * threshold does. mlepipe's: the final submission, its own format rule, a
 * null threshold is a milestone never reached.
 */
export interface RewardInputs {
  submission: 'final' | 'last-scored';
  format_rule: 'mlepipe' | 'release';
  thresholds: 'unreached' | 'release';
}

export const DEFAULT_INPUTS: RewardInputs = { submission: 'final', format_rule: 'mlepipe', thresholds: 'unreached' };

/** Presets that read other inputs: the released SandMLE code's (deepresearch_workflow.py). */
const PRESET_INPUTS: Readonly<Record<string, RewardInputs>> = {
  'sandmle-release': { submission: 'last-scored', format_rule: 'release', thresholds: 'release' },
};

/** The inputs a stage's reward reads: what the stage writes, else its preset's (an experiment's own rewards: entry is plain), else mlepipe's. */
export function rewardInputs(
  name: string | undefined,
  rewards: Readonly<Record<string, string>>,
  written: Partial<Pick<RewardInputs, 'submission' | 'format_rule'>>,
): RewardInputs {
  const preset = name !== undefined && rewards[name] === undefined ? PRESET_INPUTS[name] : undefined;
  const base = preset ?? DEFAULT_INPUTS;
  return {
    submission: written.submission ?? base.submission,
    format_rule: written.format_rule ?? base.format_rule,
    thresholds: base.thresholds,
  };
}
