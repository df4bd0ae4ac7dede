// The guidance writer used when no model is configured: built from the task's
// own records (its domain, files, metric, starter baseline and the name of its
// configured condition), never from the fix's replacement text, so it points
// at what to check and how to read the answer, not at the patch.
import { TOOLS_BY_NAME } from '../../tools/index.js';
import { toolCalls } from '../policies/mlabsuite.js';
import type { Guidance, TaskFacts } from './index.js';

interface Rule {
  when: RegExp;
  if: string;
  then: string;
  /** The starter's settings deserve a static check too. */
  settings?: boolean;
}

// Families of the suite's conditions, by the words their names use.
export const RULES: Rule[] = [
  {
    when: /scal|normaliz/,
    if: 'a check reports columns or pixels on very different scales, or raw 0-255 pixel values',
    then: 'fit the scaling on the training data only (standardize columns, rescale pixels to 0-1 with training statistics), re-run the starter and compare with its baseline before changing the model',
  },
  {
    when: /imputation|sentinel|collision/,
    if: 'columns have missing values',
    then: 'impute them from training statistics (median, most frequent value) instead of a sentinel or zero, and check that the starter applies the same filling to train and test',
  },
  {
    when: /imbalance|rare|positive weight/,
    if: 'class counts are skewed, or the script drops or reweights classes',
    then: 'keep every training example, use class weights or balanced sampling only where the counts call for it, and compare per-class results',
  },
  {
    when: /regulari/,
    if: 'the script sets a regularization strength far from common values, or training and validation scores are both low',
    then: 'relax the regularization, then compare training and validation scores to tell underfitting from overfitting',
    settings: true,
  },
  {
    when: /context|rounds|neighborhood|oversmoothing|threshold|crop|erasing|shear|resize|bottleneck/,
    if: 'a setting limits what the model sees or decides (context length, crop or augmentation strength, message rounds, a decision threshold)',
    then: 'move that setting back toward what the data needs, keep everything else fixed, and re-run under the same split',
    settings: true,
  },
  {
    when: /inverse|order|permutation|reversal|mismatch/,
    if: 'predictions come out on a transformed scale or in another order than the sample submission',
    then: "transform predictions back to the target scale and write rows and columns in the sample submission's order",
  },
  {
    when: /loss|padding|mask input|pooling|alignment|reset|hint|self information|bond|case|encoding|overconfident|probabilit/,
    if: 'the starter builds its inputs, loss or outputs in a way the data does not support (padding or masks counted, groups not reset, categories coded as numbers, probabilities pushed to the extremes)',
    then: 'correct that step only, re-run, and compare with the baseline before any other change',
    settings: true,
  },
];

const HEALTHY = {
  if: 'every check comes back healthy',
  then: 'keep the preprocessing and look at optimisation (iterations, learning rate, model capacity), accepting a change only when validation improves on the baseline',
};

const fmt = (x: number) => String(Number(x.toPrecision(4)));

export function proceduralGuidance(f: TaskFacts): Guidance {
  const listing = f.files.join('\n');
  const calls = toolCalls(listing, f.starter, [...TOOLS_BY_NAME.keys()]).map(([why, tool, args]) => ({
    tool,
    args,
    why,
  }));
  const config = f.config.toLowerCase();
  const rules = f.config === 'healthy' ? [] : RULES.filter((r) => r.when.test(config));
  if ((rules.some((r) => r.settings) || !calls.length) && f.starter) {
    calls.push({
      tool: 'verify_hyperparam_effective',
      args: { path: 'public/train.py' },
      why: 'See where each setting of the starter is fixed, and whether any is set twice.',
    });
  }
  const dir = f.lowerIsBetter ? 'lower' : 'higher';
  const base = f.baseline
    ? ` The starter scores ${fmt(f.baseline.mean)} ± ${fmt(f.baseline.std)} over ${f.baseline.runs} seeds (${dir} is better).`
    : '';
  const condition =
    f.config === 'healthy'
      ? 'Its data and starter are configured as intended, so gains come from the model and its training rather than from a repair.'
      : `Its data or starter carries a configured condition ("${f.config}"); find the evidence for it with the tools before editing.`;
  return {
    context: `Improve the ${f.domain} task ${f.template} (${f.metric}) from its starter script public/train.py.${base} ${condition}`,
    inspect: calls,
    act: [...rules.map((r) => ({ if: r.if, then: r.then })), HEALTHY],
    validate: `Run the edited script with the same seed and split, check that submission.csv follows sample_submission.csv, and accept the edit only if its score beats ${f.baseline ? fmt(f.baseline.mean) : 'the starter'} by more than one baseline standard deviation.`,
  };
}
