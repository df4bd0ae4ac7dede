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
import { formatJson, parseJsonText } from '../../core/json-files.js';
import { evaluate, parseFormula } from '../../core/rewards/parse.js';
import type { RewardInputs } from '../../core/rewards/presets.js';
import { gradeSubmission } from '../../sandbox/evaluate.js';
import type { Sandbox, Session } from '../../sandbox/index.js';
import { readSandboxSpec } from './export.js';
import { openShaping, type ServiceShaping } from './service-shaping.js';
import { openServed, type ServedConfig, type ServedEpisodes } from './service-mlab.js';
import { lastScored } from '../../agents/reward-inputs.js';
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
  /** An mlab export, or a ReAct one in the release's format: the scaffold runs here and the agent loop samples its requests (service-mlab.ts). */
  scaffold?: ServedConfig;
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

/** What the service serves for a verl export: its tasks, how they are graded, its shaping and its scaffold. */
export type ExportServing = Pick<
  ServiceOptions,
  'tasksDir' | 'reward' | 'inputs' | 'memoryMb' | 'shaping' | 'scaffold'
>;

/** The service's options that a verl export's folder decides (sandbox.json, shaping/, tasks/). */
export async function exportServing(dir: string): Promise<ExportServing> {
  const spec = await readSandboxSpec(dir);
  const shaping = await openShaping(dir);
  return {
    tasksDir: join(dir, 'tasks'),
    reward: spec.reward,
    inputs: spec.inputs,
    memoryMb: spec.memory_mb,
    ...(shaping ? { shaping } : {}),
    ...(spec.scaffold ? { scaffold: spec.scaffold } : {}),
  };
}

/** Whether a listening address is this machine only. */
export const loopback = (host: string | undefined) =>
  host === undefined || host === 'localhost' || host === '::1' || host.startsWith('127.');

type Routes = Record<string, (body: Record<string, unknown>) => Promise<unknown>>;

/** The service's open sessions, each a jail on a task; the episodes of a scaffold run here end with theirs. */
class Sessions {
  private readonly open = new Map<string, Open>();
  /** Aborted when the service stops: jails still opening and grading in progress stop with it. */
  readonly stop = new AbortController();
  readonly served?: ServedEpisodes;

  constructor(
    private readonly o: ServiceOptions,
    readonly log: (line: string) => void,
  ) {
    this.served = o.scaffold
      ? openServed(o.scaffold, {
          python: o.python,
          abandon: (id) =>
            void this.close(id).catch((err: Error) => log(`sandbox service: closing ${id}: ${err.message}`)),
        })
      : undefined;
  }

  get size(): number {
    return this.open.size;
  }

  get(body: Record<string, unknown>): Open {
    const s = this.open.get(String(body.session));
    if (!s) throw new BadRequest(`no open session ${String(body.session)}`);
    return s;
  }

  async start(task: string): Promise<Open & { id: string }> {
    const taskDir = join(this.o.tasksDir, task);
    if (!TASK_ID.test(task) || !existsSync(join(taskDir, 'private', 'evaluator.py')))
      throw new BadRequest(`no task ${task}`);
    const session = await this.o.sandbox.open({
      task: taskDir,
      limits: { memoryMb: this.o.memoryMb },
      signal: this.stop.signal,
    });
    const id = randomUUID();
    this.open.set(id, { session, taskDir });
    return { id, session, taskDir };
  }

  async close(id: string): Promise<void> {
    const s = this.open.get(id);
    this.open.delete(id);
    this.served?.end(id);
    await s?.session.close();
  }

  async closeAll(): Promise<void> {
    await Promise.all([...this.open.keys()].map((id) => this.close(id)));
  }
}

/** A ReAct episode's jail: opened on a task, code run in it, a submission's format checked, closed. */
function sessionRoutes(o: ServiceOptions, s: Sessions): Routes {
  return {
    '/open': async (body) => {
      if (s.served)
        throw new BadRequest(
          `this export runs the ${s.served.name} scaffold: open episodes with /${s.served.name}/open`,
        );
      return { session: (await s.start(String(body.task ?? ''))).id };
    },
    '/run': async (body) => {
      const open = s.get(body);
      const timeoutMs = Number(body.timeout_ms);
      if (typeof body.code !== 'string' || !Number.isFinite(timeoutMs) || timeoutMs <= 0)
        throw new BadRequest('run needs code and a positive timeout_ms');
      const r = await execute(open.session, body.code, Number(body.turn ?? 0), timeoutMs);
      return {
        observation: observation(r, o.observationChars ?? 4000, timeoutMs),
        exit_code: r.exitCode,
        timed_out: r.timedOut,
        duration_ms: r.durationMs,
      };
    },
    '/validate': async (body) => {
      const open = s.get(body);
      const path = String(body.path ?? '');
      // Format only: the evaluator runs, but its score never reaches the agent.
      const g = await gradeSubmission(open.taskDir, open.session.workspace, grading(o, s), path);
      return {
        ok: g.ok,
        observation: g.ok
          ? `valid: ${path} has the submission's format (it was not scored)`
          : `invalid submission: ${g.error}`,
      };
    },
    '/close': async (body) => {
      await s.close(String(body.session));
      return { closed: true };
    },
  };
}

const grading = (o: ServiceOptions, s: Sessions) => ({ python: o.python, signal: s.stop.signal });

/**
 * An episode run here by its scaffold (mlab, or ReAct in the release's format): the loop opens it, then answers
 * each request it hands out.
 */
function servedRoutes(s: Sessions): Routes {
  const served = (name: string) => {
    if (s.served?.name !== name)
      throw new BadRequest(
        s.served
          ? `this export runs the ${s.served.name} scaffold here: use /${s.served.name}/open and /${s.served.name}/reply`
          : 'this export runs the ReAct scaffold in the agent loop (no scaffold in sandbox.json)',
      );
    return s.served;
  };
  const routes = (name: 'mlab' | 'react'): Routes => ({
    [`/${name}/open`]: async (body) => {
      const episodes = served(name);
      const open = await s.start(String(body.task ?? ''));
      return {
        session: open.id,
        ...(await episodes.start(open.id, open.taskDir, open.session, String(body.split ?? 'train'))),
      };
    },
    [`/${name}/reply`]: async (body) => {
      const id = String(body.session);
      const episodes = served(name);
      if (!episodes.has(id)) throw new BadRequest(`no ${name} episode ${id}`);
      if (typeof body.text !== 'string' && typeof body.error !== 'string')
        throw new BadRequest(`${name}/reply needs the reply text, or the error that left none`);
      const t = body.tokens as { prompt?: unknown; completion?: unknown } | undefined;
      const reply = typeof body.text === 'string' ? { text: body.text } : { error: String(body.error) };
      return await episodes.reply(
        id,
        reply,
        t ? { prompt: Number(t.prompt) || 0, completion: Number(t.completion) || 0 } : undefined,
      );
    },
  });
  return { ...routes('mlab'), ...routes('react') };
}

/** The end of an episode: its submission graded, its reward computed, its session closed. */
function gradeRoute(o: ServiceOptions, s: Sessions): Routes {
  const formula = parseFormula(o.reward);
  return {
    '/grade': async (body) => {
      const open = s.get(body);
      const posted = body.episode as EpisodeResult | undefined;
      if (!posted || !Array.isArray(posted.turns) || !Array.isArray(posted.messages))
        throw new BadRequest('grade needs the episode (turns, messages, ended, submission)');
      // An episode its scaffold ran here: its own record is graded (the client adds only its step and split).
      const ep = { ...posted, ...(s.served?.finished(String(body.session)) ?? {}) };
      try {
        const grade = ep.submission
          ? await gradeSubmission(open.taskDir, open.session.workspace, grading(o, s), ep.submission)
          : undefined;
        const evaluation = grade?.ok ? grade.result : null;
        // submission: last-scored rewards the Score tool's last grade; the final file only when it gave none.
        const scored = o.inputs?.submission === 'last-scored' ? lastScored(ep) : null;
        const variables = rewardVariables(
          ep,
          scored ? scored.evaluation : evaluation,
          await o.starter(open.taskDir),
          o.inputs,
        );
        // A validation episode (the export's val rows) trains nothing and adds nothing to the bank.
        const verified = variables.success === 1 && (ep as { split?: unknown }).split !== 'val';
        await o.shaping?.graded(basename(open.taskDir), stepOf(ep), ep, verified);
        return {
          reward: evaluate(formula, variables),
          variables,
          evaluation,
          ...(scored ? { rewarded: { submission: 'last-scored', turn: scored.turn } } : {}),
          grade_error: grade && !grade.ok ? grade.error : null,
        };
      } finally {
        await s.close(String(body.session));
      }
    },
  };
}

/** Turn-level shaping: an episode's calls and references to score, then the scores the loop computed. */
function shapingRoutes(o: ServiceOptions): Routes {
  const shaping = () => {
    if (!o.shaping) throw new BadRequest('this export shapes no turns (no shaping/config.json)');
    return o.shaping;
  };
  return {
    '/shaping/plan': async (body) => {
      const sh = shaping();
      const ep = body.episode as EpisodeResult | undefined;
      if (!ep || !Array.isArray(ep.turns) || !Array.isArray(ep.messages))
        throw new BadRequest('shaping/plan needs the episode (turns, messages)');
      return await sh.plan(String(body.task_id ?? ''), Number(body.step ?? 0), ep);
    },
    '/shaping/record': async (body) => {
      const sh = shaping();
      if (!Array.isArray(body.scores)) throw new BadRequest('shaping/record needs scores');
      const scores = await sh.record(String(body.task_id ?? ''), Number(body.step ?? 0), body.scores as TurnScore[]);
      return { recorded: body.scores.length, scores };
    },
  };
}

/** The HTTP side: JSON bodies in and out, the token checked, a request the service refuses answered 400. */
function requestHandler(o: ServiceOptions, s: Sessions, routes: Routes) {
  return async (req: IncomingMessage, res: ServerResponse) => {
    const send = (status: number, value: unknown) =>
      // A grade's infinite or NaN score is written as Python's json module reads it (core/json-files.ts).
      res.writeHead(status, { 'content-type': 'application/json' }).end(formatJson(value));
    try {
      if (req.method === 'GET' && req.url === '/health') return send(200, { status: 'ok', sessions: s.size });
      const route = req.method === 'POST' ? routes[req.url ?? ''] : undefined;
      if (!route) return send(404, { error: `no route ${req.method} ${req.url}` });
      if (o.token !== undefined && !sameToken(req.headers.authorization, o.token))
        return send(401, { error: 'the sandbox service needs its token (MLEPIPE_SANDBOX_TOKEN)' });
      let raw = '';
      for await (const chunk of req) raw += chunk;
      let body: Record<string, unknown>;
      try {
        body = parseJsonText(raw || '{}') as Record<string, unknown>;
      } catch {
        throw new BadRequest('the body is not JSON');
      }
      send(200, await route(body));
    } catch (err) {
      if (!(err instanceof BadRequest)) s.log(`sandbox service: ${req.url}: ${(err as Error).message}`);
      send(err instanceof BadRequest ? 400 : 500, { error: (err as Error).message });
    }
  };
}

export async function startSandboxService(o: ServiceOptions): Promise<SandboxService> {
  const s = new Sessions(o, o.log ?? (() => {}));
  const routes: Routes = { ...sessionRoutes(o, s), ...servedRoutes(s), ...gradeRoute(o, s), ...shapingRoutes(o) };
  const handle = requestHandler(o, s, routes);
  const server: Server = createServer((req, res) => void handle(req, res));
  await new Promise<void>((ok, fail) => {
    server.once('error', fail);
    server.listen(o.port ?? 0, o.host ?? '127.0.0.1', () => ok());
  });
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://${o.host ?? '127.0.0.1'}:${port}`,
    open: () => s.size,
    close: async () => {
      s.stop.abort();
      o.shaping?.close();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
      await s.closeAll();
    },
  };
}
