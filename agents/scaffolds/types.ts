// What a scaffold gets (a sandbox session on one task, a policy, limits) and
// what it gives back (the turns, the messages, where the submission is).
// The eval and grpo stages grade the submission and add reward variables.
import type { EvaluatorResult } from '../../sandbox/evaluate.js';
import type { Session } from '../../sandbox/index.js';
import type { ChatMessage, ReplyTokens } from '../llm/client.js';
import type { Guidance } from '../guidance/index.js';
import type { Policy, PolicyChoice, ScaffoldName, TaskMeta, TurnAction } from '../policies/types.js';
import type { ReleaseOptions } from './react/release-options.js';

export interface EpisodeLimits {
  /** T_max: assistant turns (react, mlab) or search nodes (aide). */
  maxTurns: number;
  /** τ_max: wall clock of one code execution. */
  stepTimeoutMs: number;
  /** The whole episode's wall clock; execution steps are cut short to fit in it. */
  timeBudgetMs: number;
  /** Approximate tokens of conversation the policy is shown (4 characters a token). */
  contextTokens: number;
  /** Characters kept of stdout and of stderr in an observation. */
  observationChars: number;
}

export interface AideOptions {
  numDrafts: number;
  debugProb: number;
  /** A buggy leaf is debugged while its debug depth is at most this (AIDE's `depth <= max`). */
  maxDebugDepth: number;
  /** The debug depth of a draft: 0 (aideml), 1 under aira-dojo, whose drafts hang below a buggy root. */
  draftDebugDepth?: number;
  /** The k of the prompt's cross-validation guideline; 1 leaves the guideline out. */
  kFold?: number;
  /** Show a preview of the task's files in draft and debug prompts. */
  dataPreview?: boolean;
  /** The review says whether lower is better (aideml); else the task's direction ranks the nodes (aira-dojo). */
  reviewDirection?: boolean;
  /** A node whose submission the task's format check refuses is buggy (aira-dojo's validity check). */
  checkSubmission?: boolean;
}

export interface TaskView {
  id: string;
  /** public/description.md */
  description: string;
  /** The metric's direction (AIDE ranks its nodes by it). */
  lowerIsBetter: boolean;
  meta: TaskMeta;
  /** The entries of public/ (folders end in /), for the prompt. */
  files?: string[];
  /** The sample submission's name within public/ (MLE-bench competitions name their own). */
  sample?: string;
}

/** A checked submission: the problem, or its grade (kept on the turn; what the agent is shown besides depends on the run). */
export type Validation =
  // `said`: the evaluator's own words where the release shows them (a release task's Score refusal).
  { ok: false; problem: string; said?: string } | { ok: true; feedback?: string; result: EvaluatorResult };

/** How react replies and observations are written: mlepipe's own tags, or the released SandMLE code's tool calls. */
export type PromptFormat = 'mlepipe' | 'sandmle-release';

export interface EpisodeContext {
  task: TaskView;
  session: Session;
  /** Host path of the task's public/ (read-only to the agent; inside the jail it sits at workspace/public). */
  publicDir?: string;
  policy: Policy;
  /** mlab: task-specific guidance for a teacher, added to the prompt it is sent but not to the recorded messages. */
  guidance?: Guidance;
  sample: number;
  limits: EpisodeLimits;
  aide: AideOptions;
  /** react: the reply format (default mlepipe). */
  promptFormat?: PromptFormat;
  /** react under sandmle-release: what else follows the release (default: all of it, in mlepipe's wording). */
  release?: ReleaseOptions;
  /**
   * Checks a submission's format against the task (MLE-bench's validate endpoint): the problem, or
   * for a valid file what the agent is told beyond that (the score, when the run shows it).
   */
  validate(path: string): Promise<Validation>;
  signal: AbortSignal;
  /** Seeded per rollout: AIDE's choice between debugging and improving. */
  random(): number;
}

export interface TurnRecord {
  turn: number;
  action: TurnAction;
  /** mlab: the action or tool called (MLAgentBench's name, or the tool's) and its arguments. */
  name?: string;
  args?: Record<string, unknown>;
  /** aide: the operator that made the node. */
  operator?: 'draft' | 'improve' | 'debug';
  parent?: number | null;
  code?: string;
  observation: string;
  /** mlab tool calls: the structured answer as the agent was given it. */
  evidence?: Record<string, unknown>;
  /** mlab: an observation intervention changed this tool's answer; the answer as the tool gave it. */
  intervention?: { mode: 'mask' | 'paraphrase'; original: { text: string; evidence: Record<string, unknown> } };
  exit_code: number | null;
  timed_out: boolean;
  duration_ms: number;
  /** The reply used the required reasoning tags and held exactly one action. */
  format_ok: boolean;
  /** The reply as the policy generated it, where the conversation keeps it cut (sandmle-release: at an imagined <tool_response>). */
  raw_reply?: string;
  /** sandmle-release's pruning took this turn's reply out of the conversation: the release's reward never sees it. */
  pruned?: true;
  /** sandmle-release: the reply made a tool call, so a tool response answered it (the release's timeout rule counts these). */
  tool_response?: boolean;
  /** A validate turn: the grade of the submission it checked (what `submission: last-scored` rewards). */
  evaluation?: EvaluatorResult;
  metric?: number | null;
  buggy?: boolean;
  /** A learnable policy's decision (template policy). */
  choice?: PolicyChoice;
  /** Per-token log-probabilities of the reply, when the endpoint gave them. */
  logprobs?: number[];
  /** The context and reply as token ids, when the endpoint gave them (what a trainer worker trains on). */
  tokens?: ReplyTokens;
}

export interface EpisodeResult {
  scaffold: ScaffoldName;
  messages: ChatMessage[];
  turns: TurnRecord[];
  /** Submission file in the workspace to grade, or null when there is none. */
  submission: string | null;
  /** How the episode ended. */
  ended: 'answer' | 'max_turns' | 'time_budget' | 'interrupted' | 'policy_error';
  error?: string;
  /** Turns hidden from the policy to fit the context budget (sandmle-release's pruning: removed from its conversation for good). */
  dropped_turns: number;
  usage: { prompt_tokens: number; completion_tokens: number; requests: number; cached: number };
  /** aide: the search tree. */
  journal?: unknown;
}

export interface Scaffold {
  readonly name: ScaffoldName;
  run(ctx: EpisodeContext): Promise<EpisodeResult>;
}
