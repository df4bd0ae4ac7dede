// Episode limits: how many turns an agent gets, how long one execution may run and how long the whole episode
// may take, in seconds. Eval and grpo both run episodes, each with presets of their own; the shape, the release's
// values and the rule "a written value wins over its preset" live here once.

/** The limits of one episode: turns, seconds an execution, seconds in all. */
export interface EpisodeLimits {
  max_turns: number;
  step_timeout: number;
  time_budget: number;
}

/** A stage's limit params as written: a preset name and any of the three values. */
export type WrittenLimits<Preset extends string> = Partial<EpisodeLimits> & { limits?: Preset };

/** What the released SandMLE code runs with (custom_train.py: MAX_LLM_CALLS, PYTHON_TIMEOUT_S and MAX_TIME_S). */
export const RELEASE_LIMITS = { max_turns: 15, step_timeout: 300, time_budget: 1200 } as const satisfies EpisodeLimits;

/** Each written value, else the preset's. */
export function withPreset(written: Partial<EpisodeLimits>, preset: EpisodeLimits): EpisodeLimits {
  return {
    max_turns: written.max_turns ?? preset.max_turns,
    step_timeout: written.step_timeout ?? preset.step_timeout,
    time_budget: written.time_budget ?? preset.time_budget,
  };
}
