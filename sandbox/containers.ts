// One container's life on a Docker engine, for every part of mlepipe that
// runs one (sandbox steps and warm jails, shell nodes and trainer workers on
// hosts, the GPU probe): create with this process's label, attach and demux
// its output, start, wait, kill, and remove whatever happens. The wait is
// guarded here: a connection cut while the engine holds a wait open (an SSH
// tunnel whose far end vanished, a proxy that stopped forwarding) can leave
// that request pending forever, so the engine is pinged meanwhile and the
// wait fails once it stops answering; a deadline, when given, fails it too.
import type Docker from 'dockerode';
import { PassThrough, type Readable, type Writable } from 'node:stream';
import { reapContainer } from '../core/reaper.js';

/** The label every container of this process carries, so that it can be told from others and found. */
export const OWNER_LABEL = 'mlepipe.pid';
/** The image sandbox steps, and shell nodes on hosts that name none, run in. */
export const DEFAULT_IMAGE = 'mlepipe-sandbox:latest';

/** A container's output, demuxed; `ended` settles when the engine closes the stream. */
export interface Attached {
  readonly stdout: PassThrough;
  /** The same stream as stdout when attached with `merged`. */
  readonly stderr: PassThrough;
  /** The container's stdin, when attached with `stdin`. */
  readonly stdin?: Writable;
  readonly ended: Promise<void>;
  /** Drops the connection and ends both streams (an attach to a container that never ran may never end by itself). */
  close(): void;
}

export interface WaitOptions {
  /** How often the engine is pinged while the wait is open; two misses in a row lose it (default 3 s). */
  pingEveryMs?: number;
  /** A deadline for the exit, after which the wait fails (default: none). */
  timeoutMs?: number;
}

export interface Container {
  readonly id: string;
  /** The engine's handle, for archives, exec and inspect. */
  readonly raw: Docker.Container;
  /** Attach before start so that no output is missed. */
  attach(o?: { stdin?: boolean; merged?: boolean }): Promise<Attached>;
  start(): Promise<void>;
  /** The exit code; rejects, saying why, when the engine is lost or the deadline passes. */
  wait(o?: WaitOptions): Promise<number>;
  /** Kills the main process; a container already gone is no error. */
  kill(): void;
  /** Removes the container and its anonymous volumes (once, however often called); never rejects. */
  remove(): Promise<void>;
}

export interface CreateOptions {
  /** Announce the container to the watchdog, which removes it should mlepipe die (this machine's engine only). */
  reap: boolean;
}

/** `KEY=VALUE` lines for a container's Env. */
export const envList = (env: Readonly<Record<string, string>>): string[] =>
  Object.entries(env).map(([k, v]) => `${k}=${v}`);

/**
 * Creates a container with this process's label, attached output and no TTY
 * unless `spec` says otherwise. Creation errors are the engine's own (a 404
 * for a missing image): callers say what failed in their terms.
 */
export async function createContainer(
  docker: Docker,
  spec: Docker.ContainerCreateOptions,
  o: CreateOptions,
): Promise<Container> {
  const raw = await docker.createContainer({
    AttachStdout: true,
    AttachStderr: true,
    Tty: false,
    ...spec,
    Labels: { [OWNER_LABEL]: String(process.pid), ...spec.Labels },
  });
  const unreap = o.reap ? reapContainer(raw.id) : () => {};
  let removed: Promise<void> | undefined;
  return {
    id: raw.id,
    raw,
    attach: (a = {}) => attach(docker, raw, a),
    start: async () => void (await raw.start()),
    wait: (w = {}) => guardedWait(docker, raw, w),
    kill: () => void raw.kill().catch(() => {}),
    remove: () =>
      (removed ??= raw
        .remove({ force: true, v: true })
        .catch(() => {})
        .then(unreap)),
  };
}

async function attach(
  docker: Docker,
  c: Docker.Container,
  o: { stdin?: boolean; merged?: boolean },
): Promise<Attached> {
  const stream = (await c.attach({
    stream: true,
    stdout: true,
    stderr: true,
    ...(o.stdin && { stdin: true, hijack: true }),
  })) as unknown as Readable & Writable;
  const stdout = new PassThrough();
  const stderr = o.merged ? stdout : new PassThrough();
  docker.modem.demuxStream(stream, stdout, stderr);
  const end = () => {
    stdout.end();
    stderr.end();
  };
  const ended = new Promise<void>((r) => {
    const done = () => {
      end();
      r();
    };
    stream.once('end', done);
    stream.once('close', done);
    stream.once('error', done);
  });
  return {
    stdout,
    stderr,
    ...(o.stdin && { stdin: stream }),
    ended,
    close: () => {
      stream.destroy();
      end();
    },
  };
}

async function guardedWait(docker: Docker, c: Docker.Container, o: WaitOptions): Promise<number> {
  const lost = engineLost(docker, o.pingEveryMs ?? 3000);
  let timer: NodeJS.Timeout | undefined;
  const late =
    o.timeoutMs === undefined
      ? new Promise<never>(() => {})
      : new Promise<never>(
          (_, reject) =>
            (timer = setTimeout(() => reject(new Error(`no exit within ${o.timeoutMs! / 1000} s`)), o.timeoutMs)),
        );
  try {
    const waited = (await Promise.race([c.wait(), lost.promise, late])) as { StatusCode: number };
    return waited.StatusCode;
  } finally {
    lost.stop();
    clearTimeout(timer);
  }
}

/** Undefined when the engine answers a ping within `timeoutMs`, else why not (one line). */
export async function engineSilence(docker: Docker, timeoutMs = 15_000): Promise<string | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<string>(
    (r) => (timer = setTimeout(() => r(`no answer to a ping within ${timeoutMs / 1000} s`), timeoutMs).unref()),
  );
  try {
    return await Promise.race([
      docker.ping().then(
        () => undefined,
        (err: Error) => err.message.split('\n')[0],
      ),
      late,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** Rejects once the engine has failed two pings in a row (checked every `everyMs`); `stop` ends the checks. */
function engineLost(docker: Docker, everyMs: number): { promise: Promise<never>; stop(): void } {
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const promise = new Promise<never>((_, reject) => {
    let misses = 0;
    const check = () => {
      if (stopped) return;
      let settled = false;
      const settle = (err?: Error) => {
        if (settled || stopped) return;
        settled = true;
        clearTimeout(late);
        if (!err) misses = 0;
        else if (++misses >= 2)
          return reject(new Error(`the engine stopped answering (${err.message.split('\n')[0]})`));
        timer = setTimeout(check, everyMs).unref();
      };
      const late = setTimeout(
        () => settle(new Error(`no answer to a ping within ${(2 * everyMs) / 1000} s`)),
        2 * everyMs,
      ).unref();
      docker.ping().then(
        () => settle(),
        (err: Error) => settle(err),
      );
    };
    timer = setTimeout(check, everyMs).unref();
  });
  promise.catch(() => {});
  return {
    promise,
    stop: () => {
      stopped = true;
      clearTimeout(timer);
    },
  };
}

const tarFs = async () => (await import('tar-fs')).default;

/**
 * Extracts a path of a container into `dir`. Only plain files and folders are
 * taken, with plain modes: links and devices stay behind, since what comes
 * back is a cache entry or a workspace of plain files. `skip` leaves out more
 * by the path each entry would be written to.
 */
export async function fetchInto(
  c: Container,
  path: string,
  dir: string,
  skip: (name: string) => boolean = () => false,
): Promise<true> {
  const archive = (await c.raw.getArchive({ path })) as unknown as Readable;
  const tar = await tarFs();
  const ignore = (name: string, header?: { type?: string }) =>
    skip(name) || (!!header && header.type !== 'file' && header.type !== 'directory');
  await new Promise<void>((ok, fail) => {
    archive
      .pipe(tar.extract(dir, { ignore, dmode: 0o755, fmode: 0o644 } as never))
      .on('finish', () => ok())
      .on('error', fail);
    archive.on('error', fail);
  });
  return true;
}
