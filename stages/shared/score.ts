// A finished episode's reward variables and reward. They are a function of what the run recorded, so a run
// scores the same whether its episode has just ended (episode.ts) or is read back from its trajectory (the eval's
// rescore.ts).
import { lastScored } from '../../agents/reward-inputs.js';
import { rewardVariables, type Trajectory } from '../../agents/trajectory.js';
import type { EpisodeResult } from '../../agents/scaffolds/types.js';
import type { EvaluatorResult } from '../../sandbox/evaluate.js';
import { evaluate, parseFormula } from '../../core/rewards/parse.js';
import { DEFAULT_INPUTS, type RewardInputs } from '../../core/rewards/presets.js';

export type EpisodeScore = Pick<Trajectory, 'variables' | 'rewarded' | 'reward'>;

/** `evaluation`: the final submission's grade (null without one); `reward`: the formula, if any. */
export function scoreEpisode(
  ep: EpisodeResult,
  evaluation: EvaluatorResult | null,
  starter: number | null,
  inputs: RewardInputs = DEFAULT_INPUTS,
  reward?: string,
): EpisodeScore {
  // last-scored: the last grade the Score tool gave in the episode; the final file only when it gave none.
  const scored = inputs.submission === 'last-scored' ? lastScored(ep) : null;
  const variables = rewardVariables(ep, scored ? scored.evaluation : evaluation, starter, inputs);
  return {
    variables,
    ...(scored ? { rewarded: { submission: 'last-scored' as const, turn: scored.turn } } : {}),
    reward: reward ? evaluate(parseFormula(reward), variables) : null,
  };
}
