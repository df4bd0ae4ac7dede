// AIDE's settings as each upstream implementation ships them, read from its code and configs:
// aideml (WecoAI/aideml, aide/utils/config.yaml), aira-greedy (aira-dojo's greedy solver with
// configs/solver/mlebench/greedy.yaml over solver/greedy.yaml) and mledojo (MLE-Dojo's agent/aide config
// and the env settings of its main config). Written values of the eval's `aide:` and limits win over these.
import type { AideOptions } from '../types.js';

export interface AidePreset {
  search: Required<AideOptions>;
  /** Nodes in all, seconds one execution may run, seconds the whole search may run. */
  limits: { max_turns: number; step_timeout: number; time_budget: number };
}

export const AIDE_PRESET_NAMES = ['aideml', 'aira-greedy', 'mledojo'] as const;
export type AidePresetName = (typeof AIDE_PRESET_NAMES)[number];

/** aideml's search: 5 drafts, debug probability 0.5, depth 3, a 5-fold guideline, the review's direction. */
const AIDEML: Required<AideOptions> = {
  numDrafts: 5,
  debugProb: 0.5,
  maxDebugDepth: 3,
  draftDebugDepth: 0,
  kFold: 5,
  dataPreview: true,
  reviewDirection: true,
  checkSubmission: false,
};

export const AIDE_PRESETS = {
  // agent.steps 20, exec.timeout 3600 s; aideml itself stops on steps only, so the whole search may take every
  // step's full timeout.
  aideml: { search: AIDEML, limits: { max_turns: 20, step_timeout: 3600, time_budget: 72000 } },
  // step_limit 500 counts the empty root node the solver starts from, so 499 nodes are written; drafts hang under
  // that buggy root and so start one debug step deep. The metric's direction is the task's, and a submission the
  // grader refuses makes the node buggy.
  'aira-greedy': {
    search: {
      numDrafts: 5,
      debugProb: 1,
      maxDebugDepth: 20,
      draftDebugDepth: 1,
      kFold: 5,
      dataPreview: true,
      reviewDirection: false,
      checkSubmission: true,
    },
    limits: { max_turns: 499, step_timeout: 14400, time_budget: 86400 },
  },
  // agent.steps 15, k_fold_validation 1; env.execution_timeout 10000 s bounds one execution and, in main.py's
  // loop, the whole run.
  mledojo: {
    search: { ...AIDEML, numDrafts: 3, kFold: 1 },
    limits: { max_turns: 15, step_timeout: 10000, time_budget: 10000 },
  },
} as const satisfies Record<AidePresetName, AidePreset>;

/** mlepipe's own settings when no preset is named (the search's older defaults, AIDE's rules). */
export const AIDE_DEFAULTS: Required<AideOptions> = { ...AIDEML, numDrafts: 3 };

/** The `aide:` parameter as written. */
export interface AideParams {
  preset?: AidePresetName;
  num_drafts?: number;
  debug_prob?: number;
  max_debug_depth?: number;
}

/** The search settings a node runs with: each written value, else its preset's, else mlepipe's defaults. */
export function aideOptions(p: AideParams): Required<AideOptions> {
  const base = p.preset ? AIDE_PRESETS[p.preset].search : AIDE_DEFAULTS;
  return {
    ...base,
    numDrafts: p.num_drafts ?? base.numDrafts,
    debugProb: p.debug_prob ?? base.debugProb,
    maxDebugDepth: p.max_debug_depth ?? base.maxDebugDepth,
  };
}
