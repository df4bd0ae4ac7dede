// The contract between the harness stage and one upstream scaffold it drives (aira-dojo, MLE-Dojo, ...). The
// stage owns what every harness shares: the policy endpoint, the runs (competition × policy × repeat), the
// limits, the progress, grading and the rows. An adapter owns what only its harness knows: how the
// competitions are laid out for it, the config it reads, the command that starts it, where its outputs land
// and what its exit means. One entry per harness in the table of adapters.ts.

/** The policy a run talks to: an OpenAI-compatible endpoint (an openai model entry, or one mlepipe serves). */
export interface PolicyEndpoint {
  /** The models: entry's name. */
  readonly name: string;
  /** Base URL with its /v1. */
  readonly baseUrl: string;
  /** The model id sent in requests. */
  readonly model: string;
  readonly apiKey?: string;
}

/** One competition the node runs on, from an mlebench node's tasks/ (tasks/mlebench-build.ts). */
export interface HarnessCompetition {
  readonly id: string;
  /** The task folder (task.json, public/, private/). */
  readonly taskDir: string;
  /** The prepared public data the agent sees (MLE-bench's <data>/<id>/prepared/public). */
  readonly publicDir: string;
  /** The answers (MLE-bench's <data>/<id>/prepared/private). */
  readonly privateDir: string;
  /** The MLE-bench checkout the competition's grader comes from. */
  readonly mlebenchRoot?: string;
}

/** What the stage's params give an adapter (the schema's fields it reads, resolved to absolute paths). */
export interface HarnessSettings {
  /** The upstream checkout. */
  readonly checkout: string;
  /** The SandMLE checkout's overlay folder for this harness (read at run time), when one is named. */
  readonly overlay?: string;
  /** The harness's own prepared data, where it has a layout of its own (MLE-Dojo: <id>/data/{public,private}). */
  readonly data?: string;
  /** The interpreter the harness runs with. */
  readonly python: string;
  /** The harness's solver (aira-dojo: aide_greedy, aira_greedy; MLE-Dojo: aide, mleagent). */
  readonly solver: string;
  /** Extra solver settings as key → value, applied after the overlay's (a smaller step limit on CPU). */
  readonly overrides: Readonly<Record<string, string | number | boolean>>;
  /** Seconds one run may take (the harness is told, and the stage stops it a little later). */
  readonly timePerRunS: number;
}

/** Everything the adapter needs to set up and read back one run. */
export interface HarnessRun {
  /** `<competition>/<policy>/<repeat>`, unique in the node. */
  readonly id: string;
  readonly competition: HarnessCompetition;
  readonly policy: PolicyEndpoint;
  readonly repeat: number;
  /** A seed for the run (from the repeat). */
  readonly seed: number;
  /** The run's own folder, empty at the start; it is kept in the node's outputs (runs/<id>/). */
  readonly dir: string;
  /** What the adapter's layout() returned for the node (shared by every run). */
  readonly layout: string;
  readonly settings: HarnessSettings;
  /** Stops the run (the node is stopping); what collect() starts must stop with it. */
  readonly signal: AbortSignal;
}

/** How to start one run: argv[0] is the program. */
export interface HarnessCommand {
  readonly argv: readonly string[];
  readonly cwd: string;
  /** Added to a minimal environment (PATH, HOME, LANG kept). */
  readonly env: Readonly<Record<string, string>>;
}

/** How the process ended, as the stage saw it. */
export interface HarnessExit {
  readonly code: number | null;
  readonly signal: string | null;
  /** The stage stopped it at the run's time limit. */
  readonly timedOut: boolean;
  readonly seconds: number;
}

/** What the adapter found after a run. */
export interface HarnessOutcome {
  /** The final submission file the harness chose, absent when it wrote none. */
  readonly submission?: string;
  /** The harness's journal (its search tree) and other files worth keeping, relative to the run's folder. */
  readonly journal?: string;
  /** The harness's own score of its final submission, when it grades; compared with ours, not used for rows. */
  readonly harnessScore?: number | null;
  /** Steps (nodes) the harness recorded. */
  readonly steps?: number;
  /**
   * The harness's own grade of `submission`, for a harness whose grader is not MLE-bench's (MLE-Dojo: its
   * scorer's raw score and its HumanRank in [0, 1], both boards averaged); the run's row uses it.
   */
  readonly dojo?: { readonly score: number | null; readonly humanRank: number | null };
  /** Why the run failed (a non-zero exit, a timeout, no submission), in a line; absent when it succeeded. */
  readonly failure?: string;
}

/** Which grader a harness's submissions are graded with. */
export type HarnessGrader = 'mlebench' | 'mledojo';

export interface HarnessAdapter {
  /** The `harness:` value. */
  readonly name: string;
  readonly description: string;
  /** Solvers the adapter knows how to configure. */
  readonly solvers: readonly string[];
  readonly grader: HarnessGrader;
  /** Files (relative to the checkout) whose absence means the checkout is not this harness. */
  readonly checkoutFiles: readonly string[];
  /** Python modules the harness's interpreter must import (checked before the node starts). */
  readonly modules: readonly string[];
  /**
   * The files (absolute paths) the run's config is read from besides the checkout (the overlay's experiment
   * files of the solver): their contents go into the node key. Throws EnvError when they cannot be found.
   */
  configFiles(settings: HarnessSettings): Promise<string[]>;
  /**
   * Lays the competitions out once for the node, in `dir` (empty), as the harness expects its data; returns
   * what each run gets as `layout` (usually `dir` or a folder under it).
   */
  layout(competitions: readonly HarnessCompetition[], dir: string, settings: HarnessSettings): Promise<string>;
  /** Writes the run's config into run.dir and says how to start it. */
  prepare(run: HarnessRun): Promise<HarnessCommand>;
  /** Reads what the run left: the submission, the journal, the harness's own grade, or why it failed. */
  collect(run: HarnessRun, exit: HarnessExit): Promise<HarnessOutcome>;
}
