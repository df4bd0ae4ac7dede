// The sandbox service behind `mlepipe sandbox serve`: verl's agent loop,
// running on Ray workers, executes the agent's code through it in mlepipe's
// own jails and has its submissions graded. The tasks (their private answers
// too) stay with the service: a client sends code and a task's id, and reads
// observations; grading runs the task's evaluator outside the jail and scores
// the episode with mlepipe's reward variables and the experiment's formula,
// the same functions mlepipe's own rollouts use.
import { randomUUID, timingSafeEqual } from 'node:crypto';
import { existsSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { basename, join } from 'node:path';
import { execute, observation } from '../../agents/scaffolds/execute.js';
import type { EpisodeResult } from '../../agents/scaffolds/types.js';
import { rewardVariables } from '../../agents/trajectory.js';
import { evaluate, parseFormula } from '../../core/rewards/parse.js';
import type { RewardInputs } from '../../core/rewards/presets.js';
import { gradeSubmission } from '../../sandbox/evaluate.js';
import type { Sandbox, Session } from '../../sandbox/index.js';
import type { ServiceShaping } from './service-shaping.js';
import { openMlab, type MlabConfig } from './service-mlab.js';
import type { TurnScore } from '../../agents/shaping/types.js';

export interface ServiceOptions {
  sandbox: Sandbox;
  /** A folder of task folders; a client names a task by its folder's name. */
  tasksDir: string;
  /** The reward formula, already expanded. */
  reward: string;
  /** What the reward reads besides the formula (format rule, null thresholds); default mlepipe's. */
  inputs?: RewardInputs;
  python: string;
  memoryMb: number;
  /** Characters kept of stdout and of stderr in an observation (as the grpo stage's rollouts). */
  observationChars?: number;
  /** The starter baseline's score of a task folder (MLToolBench's success variable). */
  starter: (taskDir: string) => Promise<number | null>;
  host?: string;
  port?: number;
  /** When set, every POST must carry `authorization: Bearer TOKEN` (401 otherwise): the service runs code and reads answers. */
  token?: string;
  log?: (line: string) => void;
  /** Turn-level shaping of the export (service-shaping.ts): its routes, and the bank fed from /grade. */
  shaping?: ServiceShaping;
  /** An mlab export: the scaffold runs here and the agent loop samples its requests (service-mlab.ts). */
  mlab?: MlabConfig;
}

export interface SandboxService {
  url: string;
  /** Sessions open now. */
  open(): number;
  close(): Promise<void>;
}

class BadRequest extends Error {}

interface Open {
  session: Session;
  taskDir: string;
}

const TASK_ID = /^[A-Za-z0-9][\w.-]*$/;

/** Whether an authorization header carries the token; compared in constant time. */
function sameToken(header: string | undefined, token: string): boolean {
  const given = Buffer.from(header?.startsWith('Bearer ') ? header.slice(7) : '');
  const want = Buffer.from(token);
  return given.length === want.length && timingSafeEqual(given, want);
}

/** The step whose weights sampled an episode (the agent loop records it). */
const stepOf = (ep: EpisodeResult) => Number((ep as { step?: unknown }).step ?? 0) || 0;

/** Whether a listening address is this machine only. */
export const loopback = (host: string | undefined) =>
  host === undefined || host === 'localhost' || host === '::1' || host.startsWith('127.');

export async function startSandboxService(o: ServiceOptions): Promise<SandboxService> {
  const formula = parseFormula(o.reward);
  const sessions = new Map<string, Open>();
  const stop = new AbortController();
  const log = o.log ?? (() => {});
  const get = (body: Record<string, unknown>): Open => {
    const s = sessions.get(String(body.session));
    if (!s) throw new BadRequest(`no open session ${String(body.session)}`);
    return s;
  };
  const closeOne = async (id: string) => {
    const s = sessions.get(id);
    sessions.delete(id);
    mlab?.end(id);
    await s?.session.close();
  };
  const mlab = o.mlab
    ? openMlab(o.mlab, {
        python: o.python,
        abandon: (id) => void closeOne(id).catch((err: Error) => log(`sandbox service: closing ${id}: ${err.message}`)),
      })
    : undefined;
  const openSession = async (task: string) => {
    const taskDir = join(o.tasksDir, task);
    if (!TASK_ID.test(task) || !existsSync(join(taskDir, 'private', 'evaluator.py')))
      throw new BadRequest(`no task ${task}`);
    const session = await o.sandbox.open({ task: taskDir, limits: { memoryMb: o.memoryMb }, signal: stop.signal });
    const id = randomUUID();
    sessions.set(id, { session, taskDir });
    return { id, session, taskDir };
  };
  const routes: Record<string, (body: Record<string, unknown>) => Promise<unknown>> = {
    '/open': async (body) => {
      if (mlab) throw new BadRequest('this export runs the mlab scaffold: open episodes with /mlab/open');
      return { session: (await openSession(String(body.task ?? ''))).id };
    },
    '/mlab/open': async (body) => {
      if (!mlab) throw new BadRequest('this export runs the ReAct scaffold (no scaffold: mlab in sandbox.json)');
      const s = await openSession(String(body.task ?? ''));
      return { session: s.id, ...(await mlab.start(s.id, s.taskDir, s.session, String(body.split ?? 'train'))) };
    },
    '/mlab/reply': async (body) => {
      const id = String(body.session);
      if (!mlab?.has(id)) throw new BadRequest(`no mlab episode ${id}`);
      if (typeof body.text !== 'string' && typeof body.error !== 'string')
        throw new BadRequest('mlab/reply needs the reply text, or the error that left none');
      const t = body.tokens as { prompt?: unknown; completion?: unknown } | undefined;
      const reply = typeof body.text === 'string' ? { text: body.text } : { error: String(body.error) };
      return await mlab.reply(
        id,
        reply,
        t ? { prompt: Number(t.prompt) || 0, completion: Number(t.completion) || 0 } : undefined,
      );
    },
    '/run': async (body) => {
      const s = get(body);
      const timeoutMs = Number(body.timeout_ms);
      if (typeof body.code !== 'string' || !Number.isFinite(timeoutMs) || timeoutMs <= 0)
        throw new BadRequest('run needs code and a positive timeout_ms');
      const r = await execute(s.session, body.code, Number(body.turn ?? 0), timeoutMs);
      return {
        observation: observation(r, o.observationChars ?? 4000, timeoutMs),
        exit_code: r.exitCode,
        timed_out: r.timedOut,
        duration_ms: r.durationMs,
      };
    },
    '/validate': async (body) => {
      const s = get(body);
      const path = String(body.path ?? '');
      // Format only: the evaluator runs, but its score never reaches the agent.
      const g = await gradeSubmission(s.taskDir, s.session.workspace, { python: o.python, signal: stop.signal }, path);
      return {
        ok: g.ok,
        observation: g.ok
          ? `valid: ${path} has the submission's format (it was not scored)`
          : `invalid submission: ${g.error}`,
      };
    },
    '/grade': async (body) => {
      const s = get(body);
      const posted = body.episode as EpisodeResult | undefined;
      if (!posted || !Array.isArray(posted.turns) || !Array.isArray(posted.messages))
        throw new BadRequest('grade needs the episode (turns, messages, ended, submission)');
      // An mlab episode ran here: its own record is graded (the client adds only its step and split).
      const ep = { ...posted, ...(mlab?.finished(String(body.session)) ?? {}) };
      try {
        const grade = ep.submission
          ? await gradeSubmission(
              s.taskDir,
              s.session.workspace,
              { python: o.python, signal: stop.signal },
              ep.submission,
            )
          : undefined;
        const evaluation = grade?.ok ? grade.result : null;
        const variables = rewardVariables(ep, evaluation, await o.starter(s.taskDir), o.inputs);
        // A validation episode (the export's val rows) trains nothing and adds nothing to the bank.
        await o.shaping?.graded(
          basename(s.taskDir),
          stepOf(ep),
          ep,
          variables.success === 1 && (ep as { split?: unknown }).split !== 'val',
        );
        return {
          reward: evaluate(formula, variables),
          variables,
          evaluation,
          grade_error: grade && !grade.ok ? grade.error : null,
        };
      } finally {
        await closeOne(String(body.session));
      }
    },
    '/shaping/plan': async (body) => {
      if (!o.shaping) throw new BadRequest('this export shapes no turns (no shaping/config.json)');
      const ep = body.episode as EpisodeResult | undefined;
      if (!ep || !Array.isArray(ep.turns) || !Array.isArray(ep.messages))
        throw new BadRequest('shaping/plan needs the episode (turns, messages)');
      return await o.shaping.plan(String(body.task_id ?? ''), Number(body.step ?? 0), ep);
    },
    '/shaping/record': async (body) => {
      if (!o.shaping) throw new BadRequest('this export shapes no turns (no shaping/config.json)');
      if (!Array.isArray(body.scores)) throw new BadRequest('shaping/record needs scores');
      const scores = await o.shaping.record(
        String(body.task_id ?? ''),
        Number(body.step ?? 0),
        body.scores as TurnScore[],
      );
      return { recorded: body.scores.length, scores };
    },
    '/close': async (body) => {
      await closeOne(String(body.session));
      return { closed: true };
    },
  };
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const send = (status: number, value: unknown) =>
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(value));
    try {
      if (req.method === 'GET' && req.url === '/health') return send(200, { status: 'ok', sessions: sessions.size });
      const route = req.method === 'POST' ? routes[req.url ?? ''] : undefined;
      if (!route) return send(404, { error: `no route ${req.method} ${req.url}` });
      if (o.token !== undefined && !sameToken(req.headers.authorization, o.token))
        return send(401, { error: 'the sandbox service needs its token (MLEPIPE_SANDBOX_TOKEN)' });
      let raw = '';
      for await (const chunk of req) raw += chunk;
      let body: Record<string, unknown>;
      try {
        body = JSON.parse(raw || '{}') as Record<string, unknown>;
      } catch {
        throw new BadRequest('the body is not JSON');
      }
      send(200, await route(body));
    } catch (err) {
      if (!(err instanceof BadRequest)) log(`sandbox service: ${req.url}: ${(err as Error).message}`);
      send(err instanceof BadRequest ? 400 : 500, { error: (err as Error).message });
    }
  };
  const server: Server = createServer((req, res) => void handle(req, res));
  await new Promise<void>((ok, fail) => {
    server.once('error', fail);
    server.listen(o.port ?? 0, o.host ?? '127.0.0.1', () => ok());
  });
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://${o.host ?? '127.0.0.1'}:${port}`,
    open: () => sessions.size,
    close: async () => {
      stop.abort();
      o.shaping?.close();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
      await Promise.all([...sessions.keys()].map(closeOne));
    },
  };
}
