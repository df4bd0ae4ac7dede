// `mlepipe serve CHECKPOINT`: a trainer worker serving a folder of weights in
// the foreground (an sft node's checkpoint, the node's output folder that holds
// it, or a Hugging Face model folder), until Ctrl-C or SIGTERM. The worker is
// started the one way workers are started here (gpu/trainer/local.ts).
import { existsSync, statSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { EnvError, UserError } from '../../core/errors.js';
import { onceAborted } from '../../core/proc.js';
import { startLocalWorker } from '../../gpu/trainer/local.js';
import { CHECKPOINT_DIR } from '../../stages/shared/weights.js';
import { integerFlag } from '../flags.js';
import type { IO } from '../io.js';

export interface ServeOptions {
  port?: string;
  host?: string;
  threads?: string;
}

/** The folder to serve: CHECKPOINT itself, or its checkpoint/ when it is a node's output folder. */
export function checkpointFolder(arg: string): string {
  const dir = resolve(arg);
  if (!existsSync(dir))
    throw new UserError(
      `${arg}: no such folder (give a checkpoint folder, e.g. the checkpoint/ of an sft node's outputs)`,
    );
  if (!statSync(dir).isDirectory())
    throw new UserError(
      `${arg}: not a folder (give a checkpoint folder, e.g. the checkpoint/ of an sft node's outputs)`,
    );
  return existsSync(join(dir, CHECKPOINT_DIR)) && !existsSync(join(dir, 'mlepipe-worker.json'))
    ? join(dir, CHECKPOINT_DIR)
    : dir;
}

export async function serveCommand(checkpoint: string, o: ServeOptions, io: IO): Promise<number> {
  const dir = checkpointFolder(checkpoint);
  const port = integerFlag('--port', o.port, 0, 65535);
  const threads = integerFlag('--threads', o.threads, 1, 1024);
  // Checkpoints asked for over /save go to a scratch folder that goes with the worker.
  const scratch = await mkdtemp(join(tmpdir(), 'mlepipe-serve-'));
  try {
    let worker: Awaited<ReturnType<typeof startLocalWorker>>;
    try {
      worker = await startLocalWorker({
        model: { dir },
        ckptDir: scratch,
        host: o.host ?? '127.0.0.1',
        port: port ?? 8000,
        threads,
        log: (line) => io.err(line),
        signal: io.signal,
      });
    } catch (err) {
      // Ctrl-C while the model loads: the worker is already stopped.
      if (io.signal?.aborted) return 130;
      throw err;
    }
    io.out(`serving ${dir}`);
    io.out(`OpenAI base URL: ${worker.url}/v1 (model ${worker.health.model ?? 'any name'})`);
    await new Promise<void>((done) => {
      const off = io.signal ? onceAborted(io.signal, done) : () => {};
      void worker.exited.then(() => {
        off();
        done();
      });
    });
    const stopped = io.signal?.aborted;
    await worker.stop();
    if (!stopped) throw new EnvError(`the worker serving ${dir} exited on its own (its last lines are above)`);
    return 0;
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}
