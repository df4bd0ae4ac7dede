// MLToolBench's behaviour analysis (its Fig. 8 and Table 5) counts coverage in
// two categories, data management and verification, without listing which tool
// is which. Our reading: a tool that inspects the task's data (missingness,
// balance, scales, series and graph structure, texts, images) manages data; a
// tool that checks a script, its configuration, its logs and curves, or its
// outputs and predictions verifies. The seven shared tools all verify.
import { TOOLS } from './catalog.js';

export const CATEGORIES = ['data-management', 'verification'] as const;
export type Category = (typeof CATEGORIES)[number];

const VERIFY = new Set([
  // Training curves and logged metrics, wherever they come from.
  'plateau_detector',
  'convergence_estimator',
  // Scripts, predictions and generated outputs.
  'augmentation_auditor',
  'per_class_accuracy_breakdown',
  'response_quality_scorer',
  'reward_distribution_analyzer',
  'kl_reference_divergence_estimator',
  'generation_diversity_checker',
  'refusal_pattern_analyzer',
]);

export const CATEGORY_OF: ReadonlyMap<string, Category> = new Map(
  TOOLS.map((t) => [t.name, t.domain === 'shared' || VERIFY.has(t.name) ? 'verification' : 'data-management']),
);
