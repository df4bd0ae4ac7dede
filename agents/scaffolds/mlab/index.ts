// The MLAgentBench scaffold MLToolBench builds on: each step the policy writes
// its reflection, plan, fact check and thought, then one action with a JSON
// input; the action's observation is the next user message. Actions are
// MLAgentBench's 17, plus the diagnostic tools this rollout exposes (the
// Original and + MLToolBench arms differ only there). Ends on Final Answer, after max_turns actions, or when
// the episode's time budget is spent.
import { EnvError } from '../../../core/errors.js';
import { runTool, TOOL_TIMEOUT_MS } from '../../../tools/index.js';
import { renderGuidance } from '../../guidance/index.js';
import type { ChatMessage } from '../../llm/client.js';
import type { Policy } from '../../policies/types.js';
import { clip } from '../execute.js';
import { fitContext } from '../react/context.js';
import type { EpisodeContext, EpisodeResult, Scaffold, TurnRecord } from '../types.js';
import { ask, budget, newUsage } from '../turns.js';
import { argProblem, MLAB_ACTIONS } from './action-specs.js';
import { runAction, type ActionEnv, type ActionOutcome } from './actions.js';
import { intervene, targets, type Intervention, type Shown } from './intervene.js';
import { ActionError } from './files.js';
import { parseMlab } from './parse.js';
import { mlabMessages, rolloutTools } from './prompt.js';
import type { ToolChoice } from './tools.js';

// Named here too, so that what runs the scaffold imports from one place.
export { mlabMessages, rolloutTools } from './prompt.js';

export interface MlabOptions {
  tools: ToolChoice;
  /** Fraction of the chosen tools removed at the start of each rollout. */
  toolDropout: number;
  /** Seeds the dropout with the task, policy and sample. */
  seed: number;
  /** Changes what the agent is shown of some tools' answers (Table 6); the trajectory keeps both. */
  intervention?: Intervention;
  /** The model the AI actions ask (a models: entry); without it they ask the policy, when it is a model. */
  actionModel?: Policy;
}

export const MLAB_DEFAULTS: MlabOptions = { tools: 'domain', toolDropout: 0, seed: 0 };

export function mlabScaffold(opts: MlabOptions = MLAB_DEFAULTS): Scaffold {
  return { name: 'mlab', run: (ctx) => runMlab(ctx, opts) };
}

export const mlab = mlabScaffold();

/** One episode as it goes: what the policy has been sent, what it did, and the time left for its next step. */
interface Episode {
  ctx: EpisodeContext;
  opts: MlabOptions;
  messages: ChatMessage[];
  turns: TurnRecord[];
  usage: EpisodeResult['usage'];
  /** The guidance a teacher's system prompt gets (empty without guided collection). */
  guidance: string;
  left: number;
}

type Outcome = ActionOutcome & { evidence?: Record<string, unknown>; original?: Shown };

async function runMlab(ctx: EpisodeContext, opts: MlabOptions): Promise<EpisodeResult> {
  const { limits } = ctx;
  const started = Date.now();
  const tools = rolloutTools(opts, ctx.task, ctx.policy.name, ctx.sample);
  const names = [...MLAB_ACTIONS.map((a) => a.name), ...tools.map((t) => t.name)];
  const ep: Episode = {
    ctx,
    opts,
    messages: mlabMessages(ctx.task, limits, tools),
    turns: [],
    usage: newUsage(),
    // Guided collection: the teacher's system prompt gets the guidance; `messages`, the record a student
    // learns from, never does.
    guidance: ctx.guidance ? `\n\n${renderGuidance(ctx.guidance)}` : '',
    left: limits.timeBudgetMs,
  };
  const env = actionEnv(ep);
  let dropped = 0;
  let submission: string | null = null;
  let ended: EpisodeResult['ended'] = 'max_turns';
  let error: string | undefined;
  for (let t = 0; t < limits.maxTurns; t++) {
    const b = budget(ctx, started);
    if ('stop' in b) {
      ended = b.stop;
      break;
    }
    ep.left = b.left;
    const shown = fitContext(ep.messages, 2, ep.turns.map(failed), limits.contextTokens);
    dropped = Math.max(dropped, shown.dropped);
    const reply = await askStep(ep, t, shown.messages, names);
    if ('stop' in reply) {
      ended = reply.stop;
      error = reply.error;
      break;
    }
    const answered = await takeTurn(ep, env, t, reply, names);
    if (answered !== undefined) {
      submission = answered;
      ended = 'answer';
      break;
    }
  }
  // Out of actions or time without an answer: the last submission written is graded, as for ReAct.
  return {
    scaffold: 'mlab',
    messages: ep.messages,
    turns: ep.turns,
    submission: submission ?? 'submission.csv',
    ended,
    error,
    dropped_turns: dropped,
    usage: ep.usage,
  };
}

/** What the file and AI actions act through: the workspace, the session, the time left and the model they ask. */
function actionEnv(ep: Episode): ActionEnv {
  const { ctx, opts } = ep;
  return {
    roots: { workspace: ctx.session.workspace, publicDir: ctx.publicDir },
    session: ctx.session,
    timeoutMs: () => Math.max(1, Math.min(ctx.limits.stepTimeoutMs, ep.left)),
    observationChars: ctx.limits.observationChars,
    backups: new Map(),
    problem: ctx.task.description.trim(),
    async ask(purpose, prompt, file) {
      // A scripted policy rewrites and reads files itself (its edits are what it does), but has no words to
      // reflect or retrieve with: those need a model, and the observation says that none is set.
      if (!opts.actionModel && ctx.policy.kind !== 'openai' && (purpose === 'reflect' || purpose === 'retrieve')) {
        throw new ActionError(
          `this action asks a model, and none is set: the policy ${ctx.policy.name} is not a model and the stage names no action_model (a models: entry)`,
        );
      }
      const asked = opts.actionModel ? { ...ctx, policy: opts.actionModel } : ctx;
      const r = await ask(
        asked,
        {
          scaffold: 'mlab',
          purpose,
          messages: [{ role: 'user', content: prompt }],
          turn: ep.turns.length,
          sample: ctx.sample,
          history: ep.turns,
          file,
        },
        ep.usage,
      );
      // The model failing inside an action fails the action, not the episode.
      if ('stop' in r) throw new ActionError(`the model call failed: ${r.error}`);
      return r.text;
    },
  };
}

/** Asks the policy for its next step, a teacher with the guidance in its system prompt. */
async function askStep(ep: Episode, t: number, shown: ChatMessage[], names: string[]) {
  const { ctx, guidance } = ep;
  const teacherView = guidance
    ? shown.map((m, i) => (i === 0 && m.role === 'system' ? { ...m, content: m.content + guidance } : m))
    : shown;
  return ask(
    ctx,
    {
      scaffold: 'mlab',
      purpose: 'step',
      messages: teacherView,
      transcript: ep.messages,
      turn: t,
      sample: ctx.sample,
      history: ep.turns,
      actions: names,
      ...(ctx.guidance ? { guidance: ctx.guidance } : {}),
    },
    ep.usage,
  );
}

type Reply = Extract<Awaited<ReturnType<typeof ask>>, { text: string }>;

/** Records the reply's action and sends back its observation; the submission's name when it is the Final Answer. */
async function takeTurn(
  ep: Episode,
  env: ActionEnv,
  t: number,
  reply: Reply,
  names: string[],
): Promise<string | undefined> {
  const { limits } = ep.ctx;
  ep.messages.push({ role: 'assistant', content: reply.text });
  const parsed = parseMlab(reply.text, names);
  // A guided reply's token record would carry the guidance in its context ids: only the text is kept.
  const base = {
    turn: t,
    exit_code: null,
    timed_out: false,
    duration_ms: 0,
    ...(reply.choice ? { choice: reply.choice } : {}),
    ...(reply.logprobs ? { logprobs: reply.logprobs } : {}),
    ...(reply.tokens && !ep.guidance ? { tokens: reply.tokens } : {}),
  };
  if (!parsed.ok) {
    const obs = `invalid action: ${parsed.reason}`;
    ep.turns.push({ ...base, action: 'invalid', format_ok: false, observation: obs });
    ep.messages.push({ role: 'user', content: `Observation: ${obs}` });
    return undefined;
  }
  const { action: name, args } = parsed;
  const call = { ...base, name, args, format_ok: parsed.formatOk };
  if (name === 'Final Answer') {
    const file =
      typeof args.submission === 'string' && args.submission.trim() ? args.submission.trim() : 'submission.csv';
    ep.turns.push({ ...call, action: 'answer', observation: `submitted ${file}` });
    return file;
  }
  const t0 = Date.now();
  const fileAction = MLAB_ACTIONS.find((a) => a.name === name);
  const out = await perform(ep, env, name, args, t);
  const obs = clip(out.observation, limits.observationChars);
  const kind = fileAction ? (name === 'Execute Script' && out.code !== undefined ? 'code' : 'action') : 'tool';
  const { intervention } = ep.opts;
  // A tool turn keeps the structured answer as shown and, when it was changed, the answer as given.
  const answer: Partial<TurnRecord> = {
    ...(out.evidence ? { evidence: out.evidence } : {}),
    ...(out.original && intervention
      ? {
          intervention: {
            mode: intervention.mode,
            original: { text: clip(out.original.text, limits.observationChars), evidence: out.original.evidence },
          },
        }
      : {}),
  };
  ep.turns.push({
    ...call,
    action: kind,
    observation: obs,
    exit_code: out.exit_code ?? null,
    timed_out: out.timed_out ?? false,
    duration_ms: Date.now() - t0,
    ...(out.code !== undefined ? { code: out.code } : {}),
    ...answer,
  });
  ep.messages.push({ role: 'user', content: `Observation: ${obs}` });
  return undefined;
}

/** Runs an action or a tool; its failure becomes the observation, unless the machine or an interrupt caused it. */
async function perform(
  ep: Episode,
  env: ActionEnv,
  name: string,
  args: Record<string, unknown>,
  t: number,
): Promise<Outcome> {
  const fileAction = MLAB_ACTIONS.find((a) => a.name === name);
  try {
    if (fileAction) {
      const problem = argProblem(fileAction, args);
      return problem ? { observation: `error: ${problem}` } : await runAction(name, args, env);
    }
    return await callTool(ep, name, args, t);
  } catch (err) {
    if (err instanceof EnvError || ep.ctx.signal.aborted) throw err;
    return { observation: `error: ${(err as Error).message}` };
  }
}

async function callTool(ep: Episode, name: string, args: Record<string, unknown>, t: number): Promise<Outcome> {
  const { intervention } = ep.opts;
  // A tool keeps its own wall clock (scripts' step_timeout is not its), cut only by the episode's end.
  const a = await runTool(
    ep.ctx.session,
    name,
    args,
    ep.left < TOOL_TIMEOUT_MS ? { timeoutMs: Math.max(1, ep.left) } : {},
  );
  const out: Outcome = {
    observation: a.ok ? a.text : `error: ${a.text}`,
    timed_out: a.timedOut ?? false,
    ...(a.ok ? { evidence: a.evidence } : {}),
  };
  // Only a return that carries evidence is changed; a failed call is shown as it failed.
  if (!a.ok || !intervention || !targets(intervention, name, t)) return out;
  const original = { text: a.text, evidence: a.evidence };
  const seen = await intervene(intervention, name, original);
  return { ...out, observation: seen.text, evidence: seen.evidence, original };
}

function failed(t: TurnRecord): boolean {
  return (
    t.action === 'invalid' ||
    t.observation.startsWith('error:') ||
    (t.action === 'code' && (t.timed_out || t.exit_code !== 0))
  );
}
