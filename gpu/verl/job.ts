// `trainer: verl`: the exported run submitted to a Ray cluster as a job, its
// log streamed into the node's, and its results brought back. The job's id is
// chosen and recorded before submitting, so a rerun after the CLI was killed
// asks Ray about that id and reattaches to the job instead of submitting a
// second one. The job writes its checkpoints and verl's metrics file to
// absolute paths under `resultsDir`, which must be on a filesystem the Ray
// nodes share with this machine (a local head, or a shared mount).
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { execa } from 'execa';
import { EnvError, Interrupted, StageFailure } from '../../core/errors.js';
import { TURN_CREDIT_MODULE, withOverrides } from './overrides.js';
import { cliEnv, rayCli, rayToken, type RayAuth } from './ray.js';

// Named here too, so that what runs a job imports from one place.
export { withOverrides } from './overrides.js';
export { localPython, rayCli, rayToken, type RayAuth } from './ray.js';
export { ownPorts, startLocalHead, type LocalHead } from './ray-head.js';

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

type Status = 'PENDING' | 'RUNNING' | 'STOPPED' | 'SUCCEEDED' | 'FAILED' | 'UNKNOWN';

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
