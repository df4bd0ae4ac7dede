// Starting a trainer worker on this machine for the lifetime of a node (or of
// `mlepipe serve`): `python -m mlepipe_worker serve` from the trainer
// environment, in a process group of its own that the watchdog kills should
// mlepipe die (core/reaper.ts), its output forwarded line by line to the
// node's log, ready once it says where it listens and answers /health.
// A node placed on a host starts its worker in a container there instead
// (host.ts); stages/worker.ts chooses, and is the one place stages start one.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { packageRoot } from '../../core/assets.js';
import { EnvError, Interrupted } from '../../core/errors.js';
import { onceAborted, startServerGroup } from '../../core/proc.js';
import { envInstalled, pythonEnv } from '../../core/python.js';
import { TrainerClient, type Health } from './client.js';

export interface LocalWorkerOptions {
  /** What to serve: a model folder (Hugging Face layout, or a checkpoint /save wrote), or the tiny random test model. */
  model: { dir: string } | { tiny: true; seed?: number };
  /** Where /save writes checkpoints. */
  ckptDir: string;
  /** Start from the newest complete checkpoint in this folder, if there is one. */
  resume?: string;
  /** LoRA rank (0: full fine-tuning); the worker's default when absent. */
  loraRank?: number;
  /** Where to listen: loopback and a free port unless given (`mlepipe serve --host/--port`). */
  host?: string;
  port?: number;
  /** torch CPU threads (CPU runs share the machine with the sandbox). */
  threads?: number;
  /** Extra `serve` arguments, passed as they are. */
  args?: readonly string[];
  /** Each line the worker prints. */
  log(line: string): void;
  signal?: AbortSignal;
  /** How long the worker may take to load its model before it is given up on (default 10 min). */
  startTimeoutMs?: number;
}

export interface LocalWorker {
  readonly url: string;
  readonly client: TrainerClient;
  readonly health: Health;
  /** Settles when the worker's process ends, for whatever reason. */
  readonly exited: Promise<void>;
  /** Ends the worker (TERM, then KILL) and waits for it. */
  stop(): Promise<void>;
}

const LISTENING = /^mlepipe-worker listening on (\S+)/;

/**
 * The trainer environment's interpreter, or a clear error with the command
 * that installs it. `MLEPIPE_TRAINER_PYTHON` names another one instead: on a
 * GPU host, an interpreter with that host's CUDA build of torch (the lock
 * holds the CPU build) and the worker's other packages.
 */
export function trainerPython(root = packageRoot(), env = process.env): string {
  const own = env.MLEPIPE_TRAINER_PYTHON;
  if (own) {
    if (!existsSync(own)) throw new EnvError(`MLEPIPE_TRAINER_PYTHON=${own}: no such interpreter`);
    return own;
  }
  const venv = pythonEnv('trainer', root);
  if (!envInstalled(venv))
    throw new EnvError(
      `the trainer worker needs the trainer environment ${venv.dir}, which is not installed; ${venv.fix} installs it`,
    );
  return venv.python;
}

export function serveArgs(
  o: Pick<LocalWorkerOptions, 'model' | 'ckptDir' | 'resume' | 'loraRank' | 'threads' | 'args' | 'host' | 'port'>,
): string[] {
  const model =
    'dir' in o.model
      ? ['--model', o.model.dir]
      : ['--tiny', ...(o.model.seed !== undefined ? ['--seed', String(o.model.seed)] : [])];
  return [
    '-m',
    'mlepipe_worker',
    'serve',
    ...model,
    '--host',
    o.host ?? '127.0.0.1',
    '--port',
    String(o.port ?? 0),
    '--ckpt-dir',
    o.ckptDir,
    ...(o.resume ? ['--resume', o.resume] : []),
    ...(o.loraRank !== undefined ? ['--lora-rank', String(o.loraRank)] : []),
    ...(o.threads ? ['--threads', String(o.threads)] : []),
    ...(o.args ?? []),
  ];
}

export async function startLocalWorker(o: LocalWorkerOptions): Promise<LocalWorker> {
  const root = packageRoot();
  const python = trainerPython(root);
  if ('dir' in o.model && !existsSync(o.model.dir))
    throw new EnvError(`the trainer worker's model folder ${o.model.dir} does not exist`);
  const { child, exited, stop } = await startServerGroup([python, ...serveArgs(o)], {
    cwd: join(root, 'gpu', 'worker'),
    env: { PYTHONUNBUFFERED: '1', TOKENIZERS_PARALLELISM: 'false' },
  });

  const tail: string[] = [];
  const url = await new Promise<string>((resolve, reject) => {
    const guard = setTimeout(
      () =>
        reject(
          new EnvError(
            `the trainer worker did not start listening within ${Math.round((o.startTimeoutMs ?? 600_000) / 1000)} s`,
          ),
        ),
      o.startTimeoutMs ?? 600_000,
    );
    const unabort = o.signal ? onceAborted(o.signal, () => reject(new Interrupted())) : () => {};
    const settle = () => {
      clearTimeout(guard);
      unabort();
    };
    void (async () => {
      for await (const raw of child.iterable({ from: 'all' })) {
        const line = String(raw);
        o.log(line);
        tail.push(line);
        if (tail.length > 20) tail.shift();
        const m = LISTENING.exec(line);
        if (m) {
          settle();
          resolve(m[1]);
        }
      }
    })();
    void exited.then(() => {
      settle();
      reject(new EnvError(`the trainer worker exited before it was ready:\n${tail.slice(-8).join('\n')}`));
    });
  }).catch(async (err) => {
    await stop();
    throw err;
  });

  const client = new TrainerClient(url);
  let health: Health;
  try {
    health = await client.health(o.signal);
  } catch (err) {
    await stop();
    throw err;
  }
  return { url, client, health, exited, stop };
}
