// A trainer worker's container on a host's engine, once created: its start up to the port the worker listens on,
// its output passed to the node's log, how it ended, the folders moved in and out of it, and its removal.
import { mkdir, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { Readable } from 'node:stream';
import { EnvError, Interrupted } from '../../core/errors.js';
import { onceAborted, waitAtMost } from '../../core/proc.js';
import { fetchInto, type Container } from '../../sandbox/containers.js';

/** Where things live in the worker's container. */
export const IN_CONTAINER = {
  worker: '/mlepipe/worker',
  model: '/mlepipe/model',
  ckpt: '/mlepipe/ckpt',
  uploads: '/mlepipe/up',
} as const;
const LISTENING = /^mlepipe-worker listening on http:\/\/[^\s:]+:(\d+)/;

const tarFs = async () => (await import('tar-fs')).default;
export const oneLine = (err: Error) => err.message.split('\n')[0];

/** A worker's container from its start to its removal: its log, how it ended, and the files moved in and out. */
export class WorkerContainer {
  status: number | undefined;
  lost: string | undefined;
  exited: Promise<void> = Promise.resolve();
  readonly tail: string[] = [];
  tunnel: { url: string; close(): Promise<void> } | undefined;

  constructor(
    readonly c: Container,
    private readonly at: string,
    private readonly log: (line: string) => void,
  ) {}

  exitNote(): string | undefined {
    if (this.lost) return `${this.at}: lost the trainer worker's container: ${this.lost}`;
    if (this.status === undefined) return undefined;
    return `${this.at}: the trainer worker's container ${this.status === 137 ? 'was killed (exit 137)' : `exited with code ${this.status}`}`;
  }

  async remove(): Promise<void> {
    await this.tunnel?.close();
    await this.c.remove();
  }

  /** Starts the container and gives the port the worker says it listens on. */
  async start(waitMs: number, signal?: AbortSignal): Promise<string> {
    // Attached before it starts, so that no line of its output is missed.
    const { ready } = await this.follow();
    await this.c.start().catch((err: Error) => {
      throw new EnvError(`${this.at}: could not start the trainer worker's container: ${oneLine(err)}`);
    });
    // A lost engine counts as the container's end (the wait pings it meanwhile).
    this.exited = this.c.wait().then(
      (code) => void (this.status = code),
      (err: Error) => void (this.lost = oneLine(err)),
    );
    return new Promise<string>((resolve, reject) => {
      const guard = setTimeout(
        () =>
          reject(
            new EnvError(
              `${this.at}: the trainer worker did not start listening within ${Math.round(waitMs / 1000)} s`,
            ),
          ),
        waitMs,
      );
      const unabort = signal ? onceAborted(signal, () => reject(new Interrupted())) : () => {};
      const settle = () => {
        clearTimeout(guard);
        unabort();
      };
      void ready.then((p) => {
        settle();
        resolve(p);
      });
      void this.exited.then(() => {
        settle();
        reject(
          new EnvError(`${this.exitNote() ?? this.at} before the worker was ready:\n${this.tail.slice(-8).join('\n')}`),
        );
      });
    });
  }

  /** Passes the container's output to the log, keeping its last lines; gives the port once it listens. */
  private async follow(): Promise<{ ready: Promise<string> }> {
    const lines = (await this.c.attach({ merged: true })).stdout;
    let listening!: (port: string) => void;
    const ready = new Promise<string>((r) => (listening = r));
    const line = (l: string) => {
      this.log(l);
      this.tail.push(l);
      if (this.tail.length > 20) this.tail.shift();
      const m = LISTENING.exec(l);
      if (m) listening(m[1]);
    };
    void (async () => {
      let rest = '';
      for await (const chunk of lines) {
        const parts = (rest + String(chunk)).split('\n');
        rest = parts.pop()!;
        parts.forEach(line);
      }
      if (rest) line(rest);
    })().catch(() => {});
    // Wrapped: an async function's promise would otherwise wait for the one it returns.
    return { ready };
  }

  async stop(): Promise<void> {
    await this.remove();
    // An engine that went away may never answer the wait: the node does not hang on it.
    await waitAtMost(this.exited, 10_000);
  }

  async pull(containerPath: string, localDir: string): Promise<void> {
    const aside = join(dirname(localDir), `.${basename(localDir)}.pull-${process.pid}`);
    await rm(aside, { recursive: true, force: true });
    await mkdir(aside, { recursive: true });
    await fetchInto(this.c, `${containerPath.replace(/\/+$/, '')}/.`, aside).catch(async (err: Error) => {
      await rm(aside, { recursive: true, force: true });
      throw new EnvError(
        `${this.at}: could not fetch ${containerPath} from the trainer worker's container: ${oneLine(err)}`,
      );
    });
    await rm(localDir, { recursive: true, force: true });
    await rename(aside, localDir);
  }

  async push(localDir: string): Promise<string> {
    const to = `${IN_CONTAINER.uploads}/${basename(localDir)}`;
    await putDir(this.c, localDir, to);
    return to;
  }

  /** Only frees the container's disk: a failure here costs space, never a result. */
  async drop(containerPath: string): Promise<void> {
    try {
      const e = await this.c.raw.exec({
        Cmd: ['python3', '-c', 'import shutil, sys; shutil.rmtree(sys.argv[1], ignore_errors=True)', containerPath],
      });
      const s = (await e.start({ hijack: true, stdin: false })) as unknown as Readable;
      s.resume();
      await new Promise<void>((r) => {
        s.once('end', r);
        s.once('close', r);
        s.once('error', () => r());
      });
    } catch (err) {
      this.log(`could not delete ${containerPath} in the trainer worker's container: ${oneLine(err as Error)}`);
    }
  }
}

/** A local folder into the container at `to` (parents made by the engine); caches of compiled Python stay here. */
export async function putDir(c: Container, from: string, to: string): Promise<void> {
  const tar = await tarFs();
  const prefix = to.replace(/^\/+/, '');
  const pack = tar.pack(from, {
    ignore: (name: string) => name.includes('__pycache__'),
    map: (h: { name: string }) => ({ ...h, name: h.name === '.' ? prefix : `${prefix}/${h.name}` }),
  } as never);
  await c.raw.putArchive(pack as unknown as NodeJS.ReadableStream, { path: '/' });
}
