// The eval's episode limits: the presets (paper, release; mlab's paper limits are MLToolBench's) and the
// limits a node runs with.
import { type EpisodeLimits, RELEASE_LIMITS, withPreset } from '../shared/limits.js';
import type { EvalParams } from './index.js';
import { AIDE_PRESETS } from '../../agents/scaffolds/aide/presets.js';

/**
 * Episode limits by preset. paper: SandMLE's T_max and τ_max (the episode
 * budget is ours); release: what the released code runs with.
 */
export const LIMIT_PRESETS = {
  paper: { max_turns: 20, step_timeout: 90, time_budget: 1800 },
  release: RELEASE_LIMITS,
} as const satisfies Record<string, EpisodeLimits>;

/**
 * mlab's `paper` limits are MLToolBench's (Table 2): 50 actions or one hour a rollout. The paper sets no
 * limit on one script, so a script may use what is left of the hour.
 */
export const MLAB_PAPER = { max_turns: 50, step_timeout: 3600, time_budget: 3600 } as const;

/** MLE-bench's wall-clock limit for one agent run on a competition, in seconds. */
export const MLEBENCH_TIME_BUDGET = 86400;

/** The limits a node runs with: each written value, else its preset's. */
export function episodeLimits(
  p: Pick<EvalParams, 'limits' | 'max_turns' | 'step_timeout' | 'time_budget'> & {
    scaffold?: EvalParams['scaffold'];
    aide?: EvalParams['aide'];
  },
): EpisodeLimits {
  // An AIDE preset is a whole upstream setting, its limits included.
  const aidePreset = p.scaffold === 'aide' && p.aide?.preset ? AIDE_PRESETS[p.aide.preset].limits : undefined;
  const preset =
    aidePreset ??
    (p.scaffold === 'mlab' && (p.limits ?? 'paper') === 'paper' ? MLAB_PAPER : LIMIT_PRESETS[p.limits ?? 'paper']);
  return withPreset(p, preset);
}
