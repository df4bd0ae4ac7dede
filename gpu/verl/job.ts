// `trainer: verl`: the exported run submitted to a Ray cluster as a job, its
// log streamed into the node's, and its results brought back. The job's id is
// chosen and recorded before submitting, so a rerun after the CLI was killed
// asks Ray about that id and reattaches to the job instead of submitting a
// second one. The job writes its checkpoints and verl's metrics file to
// absolute paths under `resultsDir`, which must be on a filesystem the Ray
// nodes share with this machine (a local head, or a shared mount).
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { homedir, tmpdir } from 'node:os';
import { execa } from 'execa';
import { packageRoot } from '../../core/assets.js';
import { EnvError, Interrupted, StageFailure } from '../../core/errors.js';
import { TURN_CREDIT_MODULE, withOverrides } from './overrides.js';

export { withOverrides } from './overrides.js';

export interface JobRecord {
  id: string;
  address: string;
}

export interface JobOptions {
  exportDir: string;
  resultsDir: string;
  address: string;
  overrides: readonly string[];
  /** The interpreter the job runs with, on the cluster: its entrypoint checks the cluster's resources, then becomes main_ppo. */
  python: string;
  /** What mlepipe_verl.launch is told before the overrides: ['sft'] runs verl's SFT trainer instead of main_ppo. */
  launch?: readonly string[];
  /** What the export's trainer_overrides.yaml says the job's processes need in their environment (a CPU run's platform). */
  env?: Readonly<Record<string, string>>;
  /** The token of a head this process started for the run (LocalHead.token); else the user's is used. */
  auth?: RayAuth;
  /** Seconds the job may go without a line of log before it is stopped and the node fails (0: no bound). */
  stallS?: number;
  /** The sandbox service a GRPO job's agent loop and reward reach, and its token, handed to the job's workers in its runtime environment. */
  sandboxUrl?: string;
  sandboxToken?: string;
  /** The job recorded by an earlier attempt, and how to record a new one before it is submitted. */
  recorded?: JobRecord;
  record(job: JobRecord): Promise<void>;
  log(line: string): void;
  signal: AbortSignal;
}

/** A program of .venv/verl (scripts/setup-python.sh verl), else the one of that name on PATH. */
function verlBin(name: string, fallback: string): string {
  const local = join(packageRoot(), '.venv', 'verl', 'bin', name);
  return existsSync(local) ? local : fallback;
}

/** Ray's command-line tool. */
export const rayCli = (): string => verlBin('ray', 'ray');

/** The interpreter beside rayCli(): the one a head started here runs its workers with. */
export const localPython = (): string => verlBin('python', 'python3');

type Status = 'PENDING' | 'RUNNING' | 'STOPPED' | 'SUCCEEDED' | 'FAILED' | 'UNKNOWN';

/**
 * The token a Ray client presents to a cluster with token authentication, found as Ray's own clients find it:
 * RAY_AUTH_TOKEN, the file RAY_AUTH_TOKEN_PATH names, else ~/.ray/auth_token (which a local `ray.init()` writes,
 * after which every `ray start` turns authentication on). Undefined when there is none.
 */
export function rayToken(env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (env.RAY_AUTH_TOKEN) return env.RAY_AUTH_TOKEN.trim();
  const file = env.RAY_AUTH_TOKEN_PATH || join(homedir(), '.ray', 'auth_token');
  return existsSync(file) ? readFileSync(file, 'utf8').trim() || undefined : undefined;
}

/** How this process talks to a cluster: the token of a head it started, else the user's (rayToken). */
export interface RayAuth {
  token?: string;
}

/** The environment of a `ray` command for the cluster: a head's own token; the user's the CLI finds itself. */
const cliEnv = (auth: RayAuth = {}): Record<string, string> =>
  auth.token ? { RAY_AUTH_MODE: 'token', RAY_AUTH_TOKEN: auth.token } : {};

/** The job's state from the job server's REST API (what `ray job status` reads), or undefined when Ray has no such job. */
async function status(job: JobRecord, auth: RayAuth = {}): Promise<Status | undefined> {
  let res: Response;
  const token = auth.token ?? rayToken();
  try {
    res = await fetch(`${job.address.replace(/\/$/, '')}/api/jobs/${encodeURIComponent(job.id)}`, {
      headers: token ? { authorization: `Bearer ${token}` } : {},
    });
  } catch (err) {
    throw new EnvError(`cannot reach Ray's job server at ${job.address}: ${(err as Error).message}`);
  }
  if (res.status === 404) return undefined;
  if (res.status === 401 || res.status === 403)
    throw new EnvError(
      `Ray's job server at ${job.address} refused mlepipe's token (${res.status}): the cluster has token authentication; give its token as RAY_AUTH_TOKEN, or RAY_AUTH_TOKEN_PATH, or in ~/.ray/auth_token`,
    );
  if (!res.ok) throw new EnvError(`Ray's job server at ${job.address} answered ${res.status} about job ${job.id}`);
  return ((await res.json()) as { status: Status }).status;
}

export async function runJob(o: JobOptions): Promise<{ id: string; reattached: boolean }> {
  const ray = rayCli();
  let job = o.recorded && o.recorded.address === o.address ? o.recorded : undefined;
  if (!job) {
    job = { id: `mlepipe-${randomBytes(6).toString('hex')}`, address: o.address };
    await o.record(job);
  }
  let state = await status(job, o.auth);
  const reattached = state !== undefined;
  if (state === undefined) {
    await submitJob(ray, job, o);
    o.log(`submitted ray job ${job.id} to ${job.address}`);
  } else {
    o.log(`reattached to ray job ${job.id} at ${job.address} (${state})`);
  }
  const stalled = await followJob(ray, job, o);
  if (o.signal.aborted) {
    o.log('interrupted (the Ray job keeps running; a rerun reattaches to it)');
    throw new Interrupted();
  }
  if (stalled)
    throw new StageFailure(
      `ray job ${job.id} printed nothing for ${o.stallS} s and was stopped (verl.stall_timeout_s; its log is above)`,
    );
  // `logs --follow` can return a moment before the status settles.
  for (let i = 0; i < 30; i++) {
    state = await status(job, o.auth);
    if (state !== 'RUNNING' && state !== 'PENDING') break;
    await new Promise((r) => setTimeout(r, 1000));
  }
  if (state !== 'SUCCEEDED') throw new StageFailure(`ray job ${job.id} ended ${state ?? 'missing'} (its log is above)`);
  return { id: job.id, reattached };
}

/** Submits the export as the job of the recorded id, its results going under resultsDir. */
async function submitJob(ray: string, job: JobRecord, o: JobOptions): Promise<void> {
  const overrides = withOverrides(o.overrides, {
    'trainer.default_local_dir': join(o.resultsDir, 'checkpoints'),
  });
  const sandbox = o.sandboxUrl
    ? { MLEPIPE_SANDBOX_URL: o.sandboxUrl, MLEPIPE_SANDBOX_TOKEN: o.sandboxToken ?? '' }
    : {};
  // TensorBoard's folder for verl's tensorboard tracker (trainer.logger), beside its metrics file.
  const env = {
    ...sandbox,
    VERL_FILE_LOGGER_PATH: join(o.resultsDir, 'metrics.jsonl'),
    TENSORBOARD_DIR: join(o.resultsDir, 'tensorboard'),
    VERL_USE_EXTERNAL_MODULES: TURN_CREDIT_MODULE,
    ...o.env,
  };
  const args = [
    'job',
    'submit',
    '--address',
    job.address,
    '--submission-id',
    job.id,
    '--no-wait',
    '--working-dir',
    o.exportDir,
    '--runtime-env-json',
    JSON.stringify({ excludes: ['tasks/'], env_vars: env }),
    '--',
    o.python,
    '-m',
    'mlepipe_verl.launch',
    ...(o.launch ?? []),
    ...overrides,
  ];
  await submit(ray, args, job, o.log, SUBMIT_PATIENCE_MS, o.auth);
}

/** Streams the job's log into the node's until the job ends or is stopped for silence; true when it was stopped. */
async function followJob(ray: string, job: JobRecord, o: JobOptions): Promise<boolean> {
  // The log follower ends with the job; an interrupt stops following, never the job.
  const follow = execa(ray, ['job', 'logs', job.id, '--follow', '--address', job.address], {
    reject: false,
    cancelSignal: o.signal,
    all: true,
    buffer: false,
    env: cliEnv(o.auth),
  });
  let partial = '';
  let heard = Date.now();
  follow.all?.on('data', (c: Buffer) => {
    heard = Date.now();
    const lines = (partial + c.toString()).split('\n');
    partial = lines.pop() ?? '';
    for (const l of lines) o.log(`[ray] ${l}`);
  });
  // A job whose processes wait on each other without end (a rollout server that died under verl's weight sync, a
  // placement that cannot be met) says nothing more: past stallS of silence it is stopped, and the node fails.
  let stalled = false;
  const watchdog = o.stallS
    ? setInterval(() => {
        if (stalled || Date.now() - heard < o.stallS! * 1000) return;
        stalled = true;
        o.log(`ray job ${job.id} printed nothing for ${o.stallS} s; stopping it`);
        void execa(ray, ['job', 'stop', '--address', job.address, job.id], {
          reject: false,
          timeout: 120_000,
          env: cliEnv(o.auth),
        }).then(() => follow.kill());
      }, 1000)
    : undefined;
  await follow.finally(() => clearInterval(watchdog));
  if (partial) o.log(`[ray] ${partial}`);
  return stalled;
}

/** What Ray's job server answers while the head's job agent has not registered: its own words ask to try again. */
const NO_AGENT_YET = 'No available agent to submit job';
/** How long a submission keeps trying while the job server says its agent is not there yet. */
export const SUBMIT_PATIENCE_MS = 120_000;

/**
 * `ray job submit`, tried again while the job server says no job agent is available yet (it waits 10 s for
 * one, then asks the caller to try later; a head's agent registers after its dashboard answers, later still on
 * a loaded machine). The submission id is fixed, so a try that reached Ray is found by status, not repeated.
 */
export async function submit(
  ray: string,
  args: readonly string[],
  job: JobRecord,
  log: (line: string) => void,
  patienceMs = SUBMIT_PATIENCE_MS,
  auth: RayAuth = {},
): Promise<void> {
  const until = Date.now() + patienceMs;
  for (;;) {
    const r = await execa(ray, args, { reject: false, all: true, env: cliEnv(auth) });
    if (r.exitCode === 0) return;
    const said = (r.all ?? '').trim();
    if (!said.includes(NO_AGENT_YET) || Date.now() > until)
      throw new EnvError(`ray job submit to ${job.address} failed: ${said.split('\n').slice(-5).join(' ')}`);
    if ((await status(job, auth)) !== undefined) return;
    log(`ray's job server at ${job.address} has no job agent yet; submitting again`);
    await new Promise((r) => setTimeout(r, 2000));
  }
}

/**
 * n distinct free loopback ports: every listener is open before any closes, so no two are the same (one at a
 * time, the system may hand back the port it was just given).
 */
async function freePorts(n: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from(
      { length: n },
      () =>
        new Promise<Server>((ok, fail) => {
          const srv = createServer();
          srv.once('error', fail);
          srv.listen(0, '127.0.0.1', () => ok(srv));
        }),
    ),
  );
  const ports = servers.map((s) => (s.address() as { port: number }).port);
  await Promise.all(servers.map((s) => new Promise((ok) => s.close(ok))));
  return ports;
}

/**
 * Ports Ray otherwise takes at fixed numbers (its client server 10001, the dashboard agent 52365): a second
 * head on the same machine, another node's or another user's, would fail to start on them. `extra` more free
 * ports come after them, all distinct.
 */
export async function ownPorts(extra = 0): Promise<{ args: string[]; agent: number; more: number[] }> {
  const [client, agent, ...more] = await freePorts(2 + extra);
  return {
    args: ['--ray-client-server-port', String(client), '--dashboard-agent-listen-port', String(agent)],
    agent,
    more,
  };
}

export interface LocalHead {
  /** The dashboard's address, where jobs are submitted. */
  address: string;
  /** The head's own authentication token: clients give it as RAY_AUTH_TOKEN (the head started with it). */
  token: string;
  stop(): Promise<void>;
}

/**
 * A Ray head on this machine with its job server, for a run that names no cluster. `--block` keeps
 * `ray start` in the foreground: stopping it stops every process of the head, and nobody else's.
 */
export async function startLocalHead(o: {
  cpus: number;
  gpus?: number;
  log: (line: string) => void;
  env?: Record<string, string>;
}): Promise<LocalHead> {
  const temp = await mkdtemp(join(tmpdir(), 'ray-'));
  const own = await ownPorts(3);
  const [gcs, dash, metrics] = own.more;
  const args = [
    'start',
    '--head',
    '--block',
    '--num-cpus',
    String(o.cpus),
    // A CPU run's one logical GPU: verl's resource pools ask Ray for GPU bundles (gpu/verl/cpu.ts).
    ...(o.gpus ? ['--num-gpus', String(o.gpus)] : []),
    '--node-ip-address',
    '127.0.0.1',
    '--port',
    String(gcs),
    '--dashboard-host',
    '127.0.0.1',
    '--dashboard-port',
    String(dash),
    '--include-dashboard',
    'true',
    ...own.args,
    '--temp-dir',
    temp,
    '--disable-usage-stats',
  ];
  // Ray's dashboard serves its own metrics on a fixed port (44227) unless told otherwise: two heads on one machine,
  // or a head beside a process whose ray.init started one, fought over it, and the loser's job agent could not listen.
  // Token authentication with a token of its own: the head runs the jobs it is given as this user, and the user's
  // ~/.ray/auth_token (if a local ray.init() wrote one) would otherwise turn authentication on with a token mlepipe
  // does not hold.
  const token = randomBytes(32).toString('hex');
  const env = {
    RAY_USAGE_STATS_ENABLED: '0',
    DASHBOARD_METRIC_PORT: String(metrics),
    RAY_AUTH_MODE: 'token',
    RAY_AUTH_TOKEN: token,
    ...o.env,
  };
  const head = execa(rayCli(), args, { reject: false, all: true, buffer: false, env });
  // The dashboard answers before the node itself is up; `ray start` says when it is, and a node that
  // timed out starting (a loaded machine) leaves a dashboard with no node behind.
  const heard = { said: '' };
  head.all?.on('data', (c: Buffer) => {
    heard.said = (heard.said + c.toString()).slice(-4000);
    c.toString()
      .split('\n')
      .filter(Boolean)
      .forEach((l) => o.log(`[ray head] ${l}`));
  });
  const address = `http://127.0.0.1:${dash}`;
  const stop = async () => {
    head.kill('SIGTERM');
    await head;
    await rm(temp, { recursive: true, force: true });
  };
  await waitForHead(head, heard, [`${address}/api/version`, `http://127.0.0.1:${own.agent}/`], async () => {
    await stop();
    const why = lastLines(heard.said, 2);
    throw new EnvError(`the local Ray head did not start${why ? `: ${why}` : ''} (ray start ${args.join(' ')})`);
  });
  return { address, token, stop };
}

/**
 * Ready once its node has started, its job server answers and so does the job agent submissions go to (the job
 * server otherwise refuses them for a while); `gaveUp` runs when the head exits first or two minutes pass.
 */
async function waitForHead(
  head: { exitCode: number | null },
  heard: { said: string },
  urls: readonly string[],
  gaveUp: () => Promise<never>,
): Promise<void> {
  const answers = (url: string) =>
    fetch(url).then(
      () => true,
      () => false,
    );
  for (let i = 0; ; i++) {
    let up = heard.said.includes('Ray runtime started');
    for (const url of urls) up = up && (await answers(url));
    if (up) return;
    if (head.exitCode !== null || i > 240) await gaveUp();
    await new Promise((r) => setTimeout(r, 500));
  }
}

/** The last n lines with something on them, trimmed and joined by spaces. */
function lastLines(text: string, n: number): string {
  return text
    .trim()
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
    .slice(-n)
    .join(' ');
}
