// `trainer: verl`: the exported run submitted to a Ray cluster as a job, its
// log streamed into the node's, and its results brought back. The job's id is
// chosen and recorded before submitting, so a rerun after the CLI was killed
// asks Ray about that id and reattaches to the job instead of submitting a
// second one. The job writes its checkpoints and verl's metrics file to
// absolute paths under `resultsDir`, which must be on a filesystem the Ray
// nodes share with this machine (a local head, or a shared mount).
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { execa } from 'execa';
import { packageRoot } from '../../core/assets.js';
import { EnvError } from '../../core/errors.js';
import { TURN_CREDIT_MODULE } from './overrides.js';

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

/** The job's state from the job server's REST API (what `ray job status` reads), or undefined when Ray has no such job. */
async function status(job: JobRecord): Promise<Status | undefined> {
  let res: Response;
  try {
    res = await fetch(`${job.address.replace(/\/$/, '')}/api/jobs/${encodeURIComponent(job.id)}`);
  } catch (err) {
    throw new EnvError(`cannot reach Ray's job server at ${job.address}: ${(err as Error).message}`);
  }
  if (res.status === 404) return undefined;
  if (!res.ok) throw new EnvError(`Ray's job server at ${job.address} answered ${res.status} about job ${job.id}`);
  return ((await res.json()) as { status: Status }).status;
}

/** Replaces or adds Hydra overrides by key (Hydra refuses a key given twice). */
export function withOverrides(base: readonly string[], extra: Record<string, string>): string[] {
  const keys = new Set(Object.keys(extra));
  return [...base.filter((o) => !keys.has(o.slice(0, o.indexOf('=')))), ...Object.entries(extra).map(([k, v]) => `${k}=${v}`)];
}

export async function runJob(o: JobOptions): Promise<{ id: string; reattached: boolean }> {
  const ray = rayCli();
  let job = o.recorded && o.recorded.address === o.address ? o.recorded : undefined;
  if (!job) {
    job = { id: `mlepipe-${randomBytes(6).toString('hex')}`, address: o.address };
    await o.record(job);
  }
  let state = await status(job);
  const reattached = state !== undefined;
  if (state === undefined) {
    const overrides = withOverrides(o.overrides, {
      'trainer.default_local_dir': join(o.resultsDir, 'checkpoints'),
    });
    const sandbox = o.sandboxUrl ? { MLEPIPE_SANDBOX_URL: o.sandboxUrl, MLEPIPE_SANDBOX_TOKEN: o.sandboxToken ?? '' } : {};
    // TensorBoard's folder for verl's tensorboard tracker (trainer.logger), beside its metrics file.
    const env = { ...sandbox, VERL_FILE_LOGGER_PATH: join(o.resultsDir, 'metrics.jsonl'), TENSORBOARD_DIR: join(o.resultsDir, 'tensorboard'), VERL_USE_EXTERNAL_MODULES: TURN_CREDIT_MODULE };
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
    const r = await execa(ray, args, { reject: false, all: true });
    if (r.exitCode !== 0) throw new EnvError(`ray job submit to ${job.address} failed: ${(r.all ?? '').trim().split('\n').slice(-5).join(' ')}`);
    o.log(`submitted ray job ${job.id} to ${job.address}`);
  } else {
    o.log(`reattached to ray job ${job.id} at ${job.address} (${state})`);
  }
  // The log follower ends with the job; an interrupt stops following, never the job.
  const follow = execa(ray, ['job', 'logs', job.id, '--follow', '--address', job.address], { reject: false, cancelSignal: o.signal, all: true, buffer: false });
  let partial = '';
  follow.all?.on('data', (c: Buffer) => {
    const lines = (partial + c.toString()).split('\n');
    partial = lines.pop() ?? '';
    for (const l of lines) o.log(`[ray] ${l}`);
  });
  await follow;
  if (partial) o.log(`[ray] ${partial}`);
  if (o.signal.aborted) throw new Error('interrupted (the Ray job keeps running; a rerun reattaches to it)');
  // `logs --follow` can return a moment before the status settles.
  for (let i = 0; i < 30; i++) {
    state = await status(job);
    if (state !== 'RUNNING' && state !== 'PENDING') break;
    await new Promise((r) => setTimeout(r, 1000));
  }
  if (state !== 'SUCCEEDED') throw new Error(`ray job ${job.id} ended ${state ?? 'missing'} (its log is above)`);
  return { id: job.id, reattached };
}

const freePort = () =>
  new Promise<number>((ok, fail) => {
    const srv = createServer();
    srv.once('error', fail);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => ok(port));
    });
  });

/**
 * Ports Ray otherwise takes at fixed numbers (its client server 10001, the dashboard agent 52365): a second
 * head on the same machine, another node's or another user's, would fail to start on them.
 */
export const ownPorts = async () => ['--ray-client-server-port', String(await freePort()), '--dashboard-agent-listen-port', String(await freePort())];

export interface LocalHead {
  /** The dashboard's address, where jobs are submitted. */
  address: string;
  stop(): Promise<void>;
}

/**
 * A Ray head on this machine with its job server, for a run that names no cluster. `--block` keeps
 * `ray start` in the foreground: stopping it stops every process of the head, and nobody else's.
 */
export async function startLocalHead(o: { cpus: number; log: (line: string) => void; env?: Record<string, string> }): Promise<LocalHead> {
  const temp = await mkdtemp(join(tmpdir(), 'ray-'));
  const [gcs, dash] = [await freePort(), await freePort()];
  const args = [
    'start',
    '--head',
    '--block',
    '--num-cpus',
    String(o.cpus),
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
    ...(await ownPorts()),
    '--temp-dir',
    temp,
    '--disable-usage-stats',
  ];
  const head = execa(rayCli(), args, { reject: false, all: true, buffer: false, env: { RAY_USAGE_STATS_ENABLED: '0', ...o.env } });
  // The dashboard answers before the node itself is up; `ray start` says when it is, and a node that
  // timed out starting (a loaded machine) leaves a dashboard with no node behind.
  let said = '';
  head.all?.on('data', (c: Buffer) => {
    said = (said + c.toString()).slice(-4000);
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
  // Ready once its node has started and its job server answers.
  for (let i = 0; ; i++) {
    const up =
      said.includes('Ray runtime started') &&
      (await fetch(`${address}/api/version`).then(
        (r) => r.ok,
        () => false,
      ));
    if (up) return { address, stop };
    if (head.exitCode !== null || i > 240) {
      await stop();
      const why = said
        .trim()
        .split('\n')
        .map((l) => l.trim())
        .filter(Boolean)
        .slice(-2)
        .join(' ');
      throw new EnvError(`the local Ray head did not start${why ? `: ${why}` : ''} (ray start ${args.join(' ')})`);
    }
    await new Promise((r) => setTimeout(r, 500));
  }
}
