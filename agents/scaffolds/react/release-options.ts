// What `prompt_format: sandmle-release` follows of the released code besides
// its reply format, each a switch that is on (`release`) by default in that
// format and absent from mlepipe's: the user message's fields, the layout of
// an execution's observation, the cut of a hallucinated <tool_response>, and
// the rule that shrinks the conversation past the context budget. The
// released prompt texts, when a checkout of the release is named, are read
// by the stage (stages/shared/release-checkout.ts) and carried here.

/** The released prompt texts, read from a checkout's custom_evaluate.py at run time. */
export interface ReleaseTexts {
  /** SYSTEM_PROMPT: the released code appends the date to it. */
  system: string;
  /** task_specific_prompt: `{id}`, `{task_description}`, `{data_root}`. */
  task: string;
  /** user_prompt_template: `{specific_task_description}`, `{max_llm_calls}`. */
  user: string;
  /** The file they came from, and sha256 of the three texts (canonical JSON). */
  source: string;
  sha256: string;
}

export interface ReleaseOptions {
  /** release: competition id, description with the dataset folder's files, the folder, the requirements. mlepipe: the description. */
  userPrompt: 'release' | 'mlepipe';
  /** release: the last 20 lines of stdout and stderr and whether submission.csv exists. mlepipe: execute.ts's layout. */
  observations: 'release' | 'mlepipe';
  /** Store a reply cut at its first <tool_response> (the raw reply stays on its turn). */
  cutToolResponse: boolean;
  /** release: past the budget, failed tool turns leave the conversation for good. mlepipe: context.ts's fitContext. */
  pruning: 'release' | 'mlepipe';
  /** The released texts; absent: mlepipe's own wording. */
  texts?: ReleaseTexts;
  /** Appended to the released system prompt where the release appends today's date (YYYY-MM-DD). */
  date: string;
}

/** The date a released system prompt ends with unless `date:` says otherwise: fixed, so prompts (and caches) repeat. */
export const RELEASE_DATE = '2026-04-01';

export const RELEASE_DEFAULTS: ReleaseOptions = {
  userPrompt: 'release',
  observations: 'release',
  cutToolResponse: true,
  pruning: 'release',
  date: RELEASE_DATE,
};

/** The stage parameter `release:` as written (eval and grpo). */
export interface ReleaseParam {
  checkout?: string;
  user_prompt?: 'release' | 'mlepipe';
  observations?: 'release' | 'mlepipe';
  cut_tool_response?: boolean;
  pruning?: 'release' | 'mlepipe';
  date?: string;
}

/** The switches a node runs with (its key holds them): what is written, the rest as the release does. */
export function releaseSwitches(p: ReleaseParam | undefined): Omit<ReleaseOptions, 'texts'> {
  return {
    userPrompt: p?.user_prompt ?? RELEASE_DEFAULTS.userPrompt,
    observations: p?.observations ?? RELEASE_DEFAULTS.observations,
    cutToolResponse: p?.cut_tool_response ?? RELEASE_DEFAULTS.cutToolResponse,
    pruning: p?.pruning ?? RELEASE_DEFAULTS.pruning,
    date: p?.date ?? RELEASE_DATE,
  };
}
