// Training metrics where researchers watch them: grpo and sft nodes hand each
// row of their metrics.jsonl, as they make it, to a sidecar process
// (python/mlepipe_logger.py in .venv/logger) that writes TensorBoard event
// files under the node's output, tensorboard/, and logs to Weights & Biases
// when the project settings' logger: lists wandb. metrics.jsonl stays the
// record `mlepipe report` reads; these are views of it. Without the logger
// environment a node still trains (and says what it did not write), unless
// W&B was asked for: then it stops before training, as a run the user expects
// on W&B that never shows up there is worse than no run.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { join } from 'node:path';
import { assetPath } from '../../core/assets.js';
import { EnvError } from '../../core/errors.js';
import { envInstalled, pythonEnv } from '../../core/python.js';
import type { StageContext } from '../contract.js';

export const TENSORBOARD_DIR = 'tensorboard';

export interface TrainLog {
  /** One metrics.jsonl row; `step` is its step on every curve. */
  write(row: Readonly<Record<string, unknown>>): void;
  /** Flushes and closes the files and the W&B run; safe to call more than once. */
  close(): Promise<void>;
}

const NONE: TrainLog = { write: () => {}, close: async () => {} };

export interface TrainLogOptions {
  /** Logged as the W&B run's config (the node's parameters). */
  config?: unknown;
  /** The interpreter with tensorboardX (and wandb); default .venv/logger's. */
  python?: string;
  /** How long the sidecar may take to open its writers (wandb.init may talk to its server). */
  readyTimeoutMs?: number;
}

type Ctx = Pick<StageContext<unknown>, 'node' | 'outDir' | 'log' | 'tracking'>;

/** EXPERIMENT/NODE[@variant]; the node id alone where no experiment is named. */
export function runName(ctx: Pick<StageContext<unknown>, 'node' | 'tracking'>): string {
  return ctx.tracking ? `${ctx.tracking.experiment}/${ctx.node.id}` : ctx.node.id;
}

/** Starts the sidecar for a node; resolves once its writers are open (or once it is clear they will not be). */
export async function openTrainLog(ctx: Ctx, o: TrainLogOptions = {}): Promise<TrainLog> {
  const wandb = ctx.tracking?.logger.includes('wandb') ?? false;
  const env = pythonEnv('logger');
  const python = o.python ?? env.python;
  const unavailable = (why: string): TrainLog => {
    if (wandb) throw new EnvError(`logger: [wandb] in the project settings, but ${why}`);
    ctx.log(`TensorBoard files not written: ${why}`);
    return NONE;
  };
  if (!o.python && !envInstalled(env))
    return unavailable(`the logger environment ${env.dir} is not installed (${env.fix})`);

  // The run's name wherever it is shown: EXPERIMENT/NODE[@variant], as `<cache>/tensorboard/` names its link.
  const run = runName(ctx);
  const args = [assetPath('python/mlepipe_logger.py'), '--logdir', join(ctx.outDir, TENSORBOARD_DIR), '--name', run];
  if (wandb) args.push('--wandb', '--project', ctx.tracking!.experiment, '--group', ctx.node.name);
  const child = spawn(python, args, { stdio: ['pipe', 'pipe', 'pipe'] });
  child.stdin.on('error', () => {});
  if (wandb) child.stdin.write(JSON.stringify(o.config ?? {}) + '\n');
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => void (stderr = (stderr + c.toString()).slice(-4000)));
  const exited = new Promise<number | null>((resolve) => {
    child.on('error', (err) => ((stderr += `\n${err.message}`), resolve(null)));
    child.on('close', (code) => resolve(code));
  });
  const lastLine = () => stderr.trim().split('\n').pop() ?? '';
  const ready = await new Promise<boolean>((resolve) => {
    let out = '';
    const timer = setTimeout(() => resolve(false), o.readyTimeoutMs ?? 120_000);
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString();
      if (/^ready$/m.test(out)) (clearTimeout(timer), resolve(true));
    });
    void exited.then(() => (clearTimeout(timer), resolve(false)));
  });
  if (!ready) {
    child.kill();
    await exited;
    return unavailable(`the logger (${python} ${args[0]}) did not start: ${lastLine() || 'no ready line in time'}`);
  }
  ctx.log(
    `training metrics: TensorBoard files in ${join(ctx.outDir, TENSORBOARD_DIR)}${wandb ? `, W&B run ${run} in project ${process.env.WANDB_PROJECT || ctx.tracking!.experiment}` : ''}`,
  );
  return sidecar(ctx, child, exited, lastLine);
}

function sidecar(
  ctx: Ctx,
  child: ChildProcessWithoutNullStreams,
  exited: Promise<number | null>,
  lastLine: () => string,
): TrainLog {
  let broken = false;
  let closing: Promise<void> | undefined;
  // A logger that dies mid-run costs the curves from then on, never the training (stdin's errors are ignored from the start).
  void exited.then((code) => {
    if (!closing && !broken) {
      broken = true;
      ctx.log(`the training-metrics logger stopped (exit ${code}): ${lastLine()}; metrics.jsonl is still written`);
    }
  });
  return {
    write(row) {
      if (!broken && !closing) child.stdin.write(JSON.stringify(row) + '\n');
    },
    close() {
      closing ??= (async () => {
        child.stdin.end();
        // wandb.finish() syncs an online run's last rows; a stuck one is stopped rather than holding the node.
        const timer = setTimeout(() => child.kill(), 120_000);
        const code = await exited;
        clearTimeout(timer);
        if (code !== 0 && !broken) ctx.log(`the training-metrics logger ended with exit ${code}: ${lastLine()}`);
      })();
      return closing;
    },
  };
}
