// A policy answers a scaffold's prompt with text in the scaffold's format.
// Scripted reference agents read the structured context (turn, history,
// parent node) instead of the messages; model-backed policies read only the
// messages, as a model would.
import type { Guidance } from '../guidance/index.js';
import type { ChatMessage, ChatTool, ReplyTokens } from '../llm/client.js';

export type ScaffoldName = 'react' | 'aide' | 'mlab';

/** A learnable policy's decision at one turn: what the trainer needs to compute its gradient. */
export interface PolicyChoice {
  action: string;
  index: number;
  features: number[];
  /** log π_old(a|s) when the action was sampled. */
  logprob: number;
  /** Entropy of the policy at that state (temperature 1). */
  entropy: number;
}

/** code/answer/validate/invalid: every scaffold; action (a file action) and tool (a diagnostic): mlab. */
export type TurnAction = 'code' | 'answer' | 'validate' | 'invalid' | 'action' | 'tool';

/** What happened at an earlier turn, as the scaffold recorded it. */
export interface TurnView {
  action: TurnAction;
  /** mlab: the action or tool called. */
  name?: string;
  exit_code: number | null;
  timed_out: boolean;
  observation: string;
  /** mlab tool calls: the structured answer, as shown (what a function-calling client receives). */
  evidence?: Record<string, unknown>;
  choice?: PolicyChoice;
}

/** A task's public facts (from task.json; all of them can be read off public/ too). */
export interface TaskMeta {
  id: string;
  modality?: string;
  /** The suite's domain (cv, nlp, tabular, time_series, graph), which picks the tools `tools: domain` offers. */
  domain?: string;
  task_type?: string;
  metric?: string;
  n_train?: number;
  is_lower_better?: boolean;
}

/** A function the model must call, as OpenAI's tools describe one (a JSON schema of its arguments). */
export type ToolSpec = ChatTool;

export interface PolicyRequest {
  scaffold: ScaffoldName;
  /** react, mlab: every turn is a `step`; aide: which operator the search applies; mlab's model-backed actions: edit, understand. */
  purpose: 'step' | 'draft' | 'improve' | 'debug' | 'review' | 'edit' | 'understand' | 'reflect' | 'retrieve';
  messages: ChatMessage[];
  /** mlab and react steps: the whole conversation so far; `messages` is what the policy is shown of it (pruned to the context budget). */
  transcript?: readonly ChatMessage[];
  /** 0-based turn (react) or node index (aide). */
  turn: number;
  /** aide: the ask again after a reply without a plan or code (1, 2); absent on the first. */
  attempt?: number;
  /** Which rollout of the same task this is (repeats, GRPO groups): varies sampling. */
  sample: number;
  history: readonly TurnView[];
  task?: TaskMeta;
  /** aide: the node being improved or debugged. */
  parent?: { code: string; metric: number | null; buggy: boolean };
  /** aide review: the function the answer calls (its JSON arguments are the reply's text). */
  tool?: ToolSpec;
  /** aide review: the execution under review, as the scripted reviewers read it. */
  executed?: { code: string; output: string; exit_code: number | null; timed_out: boolean };
  /** mlab: the actions offered this rollout (file actions and the exposed tools). */
  actions?: readonly string[];
  /** react: the reply format the scaffold parses (default mlepipe's tags). */
  promptFormat?: 'mlepipe' | 'sandmle-release';
  /** mlab, guided collection: the task's guidance (already in `messages` for a model; scripted teachers read it here). */
  guidance?: Guidance;
  /** mlab edit/understand: the file the action works on. */
  file?: { name: string; content: string; instruction: string };
}

export interface PolicyReply {
  text: string;
  usage: { prompt_tokens: number; completion_tokens: number };
  cached?: boolean;
  /** Per-token log-probabilities of the reply, when asked for and the endpoint gives them. */
  logprobs?: number[];
  /** The exact context and reply tokens, when the endpoint returned them. */
  tokens?: ReplyTokens;
  choice?: PolicyChoice;
}

export interface Policy {
  /** As written in the experiment (`scripted:forest`, a models: name). */
  readonly name: string;
  readonly kind: 'scripted' | 'openai' | 'template';
  act(req: PolicyRequest, signal?: AbortSignal): Promise<PolicyReply>;
  /** Requests and tokens so far (model-backed policies). */
  usage?(): { requests: number; cached: number; prompt_tokens: number; completion_tokens: number };
}
