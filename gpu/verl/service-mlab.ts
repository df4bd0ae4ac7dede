// A scaffold inside verl's agent loop, run by the sandbox service: the mlab
// scaffold, and the ReAct scaffold in the released SandMLE code's format
// (prompt_format: sandmle-release). Their rules (mlab's 17 actions, its
// diagnostic tools; the release's parser, Score tool and tool responses; the
// observations, context pruning) live in agents/scaffolds; rather than write
// them again in Python, the sandbox service runs that same scaffold here and
// the agent loop only samples: the episode's policy is a bridge whose every
// request (a step, or an AI action asking the model) is handed to the loop as
// the answer to its last call, and whose reply is the loop's next call. So an
// episode trained on verl takes the same turns, with the same observations,
// as one rolled out by mlepipe itself. NAME is the scaffold's (mlab, react):
//   POST /NAME/open  {task, split}          → {session, request}
//   POST /NAME/reply {session, text|error}  → {request} | {done: episode}
// A request is {kind: 'step', turn, messages (shown), transcript (the whole
// conversation)} or {kind: 'ask', purpose, turn, messages}: the loop's token
// record holds the steps only; what an AI action asks is sampled, not trained.
import type { ReleaseOptions } from '../../agents/scaffolds/react/release-options.js';
import { basename, join } from 'node:path';
import type { Session } from '../../sandbox/index.js';
import type { ChatMessage } from '../../agents/llm/client.js';
import { mlabScaffold } from '../../agents/scaffolds/mlab/index.js';
import { react } from '../../agents/scaffolds/react/index.js';
import type { ToolChoice } from '../../agents/scaffolds/mlab/tools.js';
import { readTaskView } from '../../agents/scaffolds/public.js';
import type { EpisodeLimits, EpisodeResult, Scaffold, TaskView } from '../../agents/scaffolds/types.js';
import type { Policy, PolicyRequest, ScaffoldName } from '../../agents/policies/types.js';
import { gradeSubmission } from '../../sandbox/evaluate.js';
import { InternalError } from '../../core/errors.js';

/** sandbox.json's `scaffold` for an mlab export: the grpo stage's tools and limits. */
export interface MlabConfig {
  name: 'mlab';
  tools: ToolChoice;
  tool_dropout: number;
  seed: number;
  max_turns: number;
  step_timeout_s: number;
  time_budget_s: number;
  context_tokens: number;
  observation_chars: number;
}

/** sandbox.json's `scaffold` for a ReAct export in the released SandMLE code's format: its limits. */
export interface ReleaseConfig {
  name: 'react';
  prompt_format: 'sandmle-release';
  max_turns: number;
  step_timeout_s: number;
  time_budget_s: number;
  context_tokens: number;
  observation_chars: number;
  /** The release's switches and, when a checkout gave them, its prompt texts (absent: all its rules, our wording). */
  release?: ReleaseOptions;
}

/** A scaffold the service runs (sandbox.json's `scaffold`). */
export type ServedConfig = MlabConfig | ReleaseConfig;

export type MlabRequest =
  | { kind: 'step'; turn: number; messages: ChatMessage[]; transcript: ChatMessage[] }
  | { kind: 'ask'; purpose: PolicyRequest['purpose']; turn: number; messages: ChatMessage[] };
export type MlabEvent = { request: MlabRequest } | { done: EpisodeResult };

/** The name the tool dropout is seeded with (with the task and the sample), the same on every export. */
const POLICY_NAME = 'verl';
/** How long past its time budget an episode waits for the loop before it is given up. */
const ABANDON_MS = 10 * 60_000;

class Episode {
  readonly stop = new AbortController();
  result?: EpisodeResult;
  /** What the loop reported of its last reply's tokens, handed to the scaffold's usage count. */
  usage = { prompt_tokens: 0, completion_tokens: 0 };
  private queued: MlabEvent[] = [];
  private waiter?: (e: MlabEvent) => void;
  private pending?: { resolve(text: string): void; reject(err: Error): void };

  emit(e: MlabEvent): void {
    if (this.waiter) {
      const w = this.waiter;
      this.waiter = undefined;
      w(e);
    } else this.queued.push(e);
  }

  next(): Promise<MlabEvent> {
    const e = this.queued.shift();
    if (e) return Promise.resolve(e);
    if (this.waiter) throw new InternalError('a reply is already waiting for this episode');
    return new Promise((r) => (this.waiter = r));
  }

  ask(req: MlabRequest, signal?: AbortSignal): Promise<string> {
    return new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(new Error('the episode was stopped'));
      signal?.addEventListener('abort', () => reject(new Error('the episode was stopped')), { once: true });
      this.pending = { resolve, reject };
      this.emit({ request: req });
    });
  }

  /** The loop's reply, or why it has none (the model call failed): the scaffold's policy call fails with it. */
  answer(reply: { text: string } | { error: string }): void {
    const p = this.pending;
    if (!p) throw new InternalError('this episode asked nothing: it has ended or its reply was already given');
    this.pending = undefined;
    if ('text' in reply) p.resolve(reply.text);
    else p.reject(new Error(reply.error));
  }
}

export interface ServedEpisodes {
  /** The scaffold's name: its routes are /NAME/open and /NAME/reply. */
  readonly name: ServedConfig['name'];
  /** Starts the episode on an open session; answers with its first request. */
  start(id: string, taskDir: string, session: Session, split: string): Promise<MlabEvent>;
  /** The loop's reply to the last request; answers with the next request, or the finished episode. */
  reply(
    id: string,
    reply: { text: string } | { error: string },
    tokens?: { prompt: number; completion: number },
  ): Promise<MlabEvent>;
  /** The finished episode (what /grade scores: the service's record, not the client's). */
  finished(id: string): EpisodeResult | undefined;
  has(id: string): boolean;
  end(id: string): void;
}

/** The episode's policy: each request it makes goes to the loop as the answer to the loop's last call. */
function bridgePolicy(ep: Episode): Policy {
  return {
    name: POLICY_NAME,
    kind: 'openai',
    act: async (req, signal) => {
      const r: MlabRequest =
        req.purpose === 'step'
          ? { kind: 'step', turn: req.turn, messages: req.messages, transcript: [...(req.transcript ?? req.messages)] }
          : { kind: 'ask', purpose: req.purpose, turn: req.turn, messages: req.messages };
      const text = await ep.ask(r, signal);
      const usage = ep.usage;
      ep.usage = { prompt_tokens: 0, completion_tokens: 0 };
      return { text, usage };
    },
  };
}

/** An episode the environment ended (the sandbox gone): recorded, and graded as it stands, as a policy's failure would be. */
const interrupted = (scaffold: ScaffoldName, err: Error): EpisodeResult => ({
  scaffold,
  messages: [],
  turns: [],
  submission: null,
  ended: 'interrupted',
  error: err.message,
  dropped_turns: 0,
  usage: { prompt_tokens: 0, completion_tokens: 0, requests: 0, cached: 0 },
});

/** Runs the scaffold's episode on the session; the loop follows it through `ep`'s events. */
async function runEpisode(
  ep: Episode,
  scaffold: Scaffold,
  o: {
    task: TaskView;
    taskDir: string;
    session: Session;
    sample: number;
    limits: EpisodeLimits;
    python: string;
    release?: ReleaseOptions;
  },
): Promise<void> {
  await scaffold
    .run({
      // The service runs ReAct only in the release's format (mlepipe's own is run by the loop in Python).
      ...(scaffold.name === 'react' ? { promptFormat: 'sandmle-release' as const } : {}),
      ...(o.release ? { release: o.release } : {}),
      task: o.task,
      session: o.session,
      publicDir: join(o.taskDir, 'public'),
      policy: bridgePolicy(ep),
      sample: o.sample,
      limits: o.limits,
      aide: { numDrafts: 0, debugProb: 0, maxDebugDepth: 0 },
      signal: ep.stop.signal,
      random: Math.random,
      validate: async (path) => {
        const g = await gradeSubmission(
          o.taskDir,
          o.session.workspace,
          { python: o.python, signal: ep.stop.signal },
          path,
        );
        if (!g.ok) return { ok: false, problem: g.error, ...(g.said !== undefined ? { said: g.said } : {}) };
        return { ok: true, result: g.result };
      },
    })
    .catch((err: Error) => interrupted(scaffold.name, err))
    .then((result) => {
      ep.result = result;
      ep.emit({ done: result });
    });
}

/** The service's episodes of one scaffold: mlab, or ReAct in the release's format. */
export function openServed(config: ServedConfig, deps: { python: string; abandon(id: string): void }): ServedEpisodes {
  const episodes = new Map<string, Episode>();
  // Each task's episodes count up, so a group's samples draw different tool sets under dropout.
  const samples = new Map<string, number>();
  const limits: EpisodeLimits = {
    maxTurns: config.max_turns,
    stepTimeoutMs: config.step_timeout_s * 1000,
    timeBudgetMs: config.time_budget_s * 1000,
    contextTokens: config.context_tokens,
    observationChars: config.observation_chars,
  };
  const scaffolds =
    config.name === 'mlab'
      ? {
          train: mlabScaffold({ tools: config.tools, toolDropout: config.tool_dropout, seed: config.seed }),
          // Validation offers every tool: dropout is a training-time control.
          val: mlabScaffold({ tools: config.tools, toolDropout: 0, seed: config.seed }),
        }
      : { train: react, val: react };
  const get = (id: string) => {
    const ep = episodes.get(id);
    if (!ep) throw new InternalError(`no ${config.name} episode ${id}`);
    return ep;
  };
  return {
    name: config.name,
    async start(id, taskDir, session, split) {
      const task = await readTaskView(taskDir, basename(taskDir));
      const sample = samples.get(task.id) ?? 0;
      samples.set(task.id, sample + 1);
      const ep = new Episode();
      episodes.set(id, ep);
      const timer = setTimeout(() => deps.abandon(id), limits.timeBudgetMs + ABANDON_MS);
      timer.unref();
      const scaffold = split === 'val' ? scaffolds.val : scaffolds.train;
      const release = config.name === 'react' ? config.release : undefined;
      void runEpisode(ep, scaffold, { task, taskDir, session, sample, limits, python: deps.python, release }).finally(
        () => clearTimeout(timer),
      );
      return ep.next();
    },
    async reply(id, reply, tokens) {
      const ep = get(id);
      if (tokens) ep.usage = { prompt_tokens: tokens.prompt, completion_tokens: tokens.completion };
      ep.answer(reply);
      return ep.next();
    },
    finished: (id) => episodes.get(id)?.result,
    has: (id) => episodes.has(id),
    end(id) {
      episodes.get(id)?.stop.abort();
      episodes.delete(id);
    },
  };
}
