// A policy answers a scaffold's prompt with text in the scaffold's format.
// Scripted reference agents read the structured context (turn, history,
// parent node) instead of the messages; model-backed policies read only the
// messages, as a model would.
import type { ChatMessage } from '../llm/client.js';

export type ScaffoldName = 'react' | 'aide';

/** What happened at an earlier turn, as the scaffold recorded it. */
export interface TurnView {
  action: 'code' | 'answer' | 'validate' | 'invalid';
  exit_code: number | null;
  timed_out: boolean;
  observation: string;
}

export interface PolicyRequest {
  scaffold: ScaffoldName;
  /** react: every turn is a `step`; aide: which operator the search applies. */
  purpose: 'step' | 'draft' | 'improve' | 'debug';
  messages: ChatMessage[];
  /** 0-based turn (react) or node index (aide). */
  turn: number;
  /** Which rollout of the same task this is (repeats, GRPO groups): varies sampling. */
  sample: number;
  history: readonly TurnView[];
  /** aide: the node being improved or debugged. */
  parent?: { code: string; metric: number | null; buggy: boolean };
}

export interface PolicyReply {
  text: string;
  usage: { prompt_tokens: number; completion_tokens: number };
  cached?: boolean;
  /** Per-token log-probabilities of the reply, when asked for and the endpoint gives them. */
  logprobs?: number[];
}

export interface Policy {
  /** As written in the experiment (`scripted:forest`, a models: name). */
  readonly name: string;
  readonly kind: 'scripted' | 'openai';
  act(req: PolicyRequest, signal?: AbortSignal): Promise<PolicyReply>;
  /** Requests and tokens so far (model-backed policies). */
  usage?(): { requests: number; cached: number; prompt_tokens: number; completion_tokens: number };
}
