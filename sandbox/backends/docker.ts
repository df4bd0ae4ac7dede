// `docker`: containers through dockerode, on the local engine or a remote one
// (DOCKER_HOST, ssh:// included). No network, no capabilities, a read-only
// root, memory/CPU/process limits from the engine, GPUs through
// DeviceRequests when asked for. The workspace travels by bind mounts on a
// local engine and by tar archives on a remote one (where host paths mean
// nothing), which reads the task's files from its task store.
import type Docker from 'dockerode';
import { chmod, chown } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import { EnvError, HostFault } from '../../core/errors.js';
import { onceAborted, waitAtMost } from '../../core/proc.js';
import { createContainer, DEFAULT_IMAGE, OWNER_LABEL, type Attached, type Container } from '../containers.js';
import { sendPublicLink, WorkspaceMirror } from '../mirror.js';
import { taskMount, taskStore, type TaskStore } from '../task-store.js';
import { finishStep, MB, stopper, workspaceCheck } from '../limits.js';
import { AGENT_LOCK_LABEL, imagePython } from '../interpreter.js';
import { CappedOutput, jailEnv } from '../output.js';
import { BASELINE_MB, launcherArgv } from '../spawn.js';
import { holdGpus, type GpuLender, type GpuRequest } from '../gpus.js';
import type { Backend, Limits, Session, SessionOptions, Step, StepResult } from '../types.js';
import { coldSession, type Where } from '../workspace.js';

// dockerode and tar-fs load on first use: most commands never touch Docker,
// and dockerode alone would add about 0.1 s to every start of the CLI.
export function lazyEngine(given?: Docker | (() => Promise<Docker>)): () => Promise<Docker> {
  let engine: Promise<Docker> | undefined;
  return () =>
    (engine ??=
      typeof given === 'function'
        ? given()
        : given
          ? Promise.resolve(given)
          : import('dockerode').then((m) => new m.default()));
}
const NOBODY = 65534;

export interface DockerOptions {
  image?: string;
  /** The host interpreter stages chose; its counterpart in the image runs (sandbox/interpreter.ts). */
  python?: string;
  /** GPUs for the container: a count, or 'all'. */
  gpus?: number | 'all';
  /** GPUs per session from a host's share (instead of `gpus`): each session's container holds its own. */
  lender?: GpuLender;
  /** Engine client, or how to make one when first needed (default: from DOCKER_HOST, else the local socket). */
  docker?: Docker | (() => Promise<Docker>);
  /** The engine is another machine's (a host's): the workspace travels as archives, whatever DOCKER_HOST says. */
  remote?: boolean;
  /** The engine's address, for messages (default DOCKER_HOST, else the local socket). */
  where?: string;
  /** The host whose engine this is: its failures are then that host's (HostFault), and the run may move. */
  host?: string;
}

/** For `.catch`: rethrows an engine call's failure as the engine's fault, saying what was being done. */
export const lostEngine =
  (opts: DockerOptions, what: string) =>
  (err: Error): never => {
    throw engineFault(opts, `${opts.where ?? 'the engine'}: ${what}: ${err.message.split('\n')[0]}`);
  };

/** An engine that failed under a step: the host's fault where the engine is a named host's, else the environment's. */
export function engineFault(opts: DockerOptions, message: string): EnvError {
  return opts.host ? new HostFault(opts.host, message) : new EnvError(message);
}

/** True when the engine shares this machine's filesystem, so bind mounts work. */
export function engineIsLocal(env: NodeJS.ProcessEnv = process.env): boolean {
  const host = env.DOCKER_HOST;
  return !host || host.startsWith('unix://') || host.startsWith('npipe://');
}

/** Container settings for one jail (exported so the security settings can be checked without an engine). */
export function containerOptions(
  image: string,
  cmd: string[],
  limits: Limits,
  binds: { ws: string; pub: string } | null,
  extra: { gpus?: GpuRequest; openStdin?: boolean; memoryMb?: number; cpus?: number } = {},
): Docker.ContainerCreateOptions {
  // Without binds the engine is another machine's: a fresh workspace volume, and the task store read-only.
  const env = jailEnv(limits.cpus, '/workspace');
  const memory = (extra.memoryMb ?? limits.memoryMb + BASELINE_MB) * MB;
  return {
    Image: image,
    Cmd: cmd,
    Labels: { [OWNER_LABEL]: String(process.pid) },
    User: `${NOBODY}:${NOBODY}`,
    WorkingDir: '/workspace',
    Env: Object.entries(env).map(([k, v]) => `${k}=${v}`),
    NetworkDisabled: true,
    OpenStdin: !!extra.openStdin,
    // A warm server's stdin closes when mlepipe detaches (or dies), so the server, and its container, end.
    StdinOnce: !!extra.openStdin,
    AttachStdin: !!extra.openStdin,
    AttachStdout: true,
    AttachStderr: true,
    Tty: false,
    HostConfig: {
      NetworkMode: 'none',
      Memory: memory,
      MemorySwap: memory,
      PidsLimit: limits.maxProcs + 16,
      NanoCpus: Math.round((extra.cpus ?? limits.cpus) * 1e9),
      CapDrop: ['ALL'],
      SecurityOpt: ['no-new-privileges'],
      ReadonlyRootfs: true,
      Init: true,
      AutoRemove: !!extra.openStdin,
      Tmpfs: { '/tmp': `rw,nosuid,nodev,size=${Math.min(limits.maxWorkspaceMb, 1024)}m` },
      Ulimits: [
        { Name: 'fsize', Soft: limits.maxWorkspaceMb * MB, Hard: limits.maxWorkspaceMb * MB },
        { Name: 'core', Soft: 0, Hard: 0 },
      ],
      // Local engines share the host's folders; a remote one gets a fresh volume filled through the archive API.
      ...(binds
        ? { Binds: [`${binds.ws}:/workspace:rw`, `${binds.pub}:/workspace/public:ro`] }
        : { Mounts: [{ Type: 'volume', Target: '/workspace' }, taskMount()] }),
      ...(extra.gpus !== undefined ? { DeviceRequests: [deviceRequest(extra.gpus)] } : {}),
    } as Docker.HostConfig,
  };
}

/** Docker's request for GPUs: these device ids, or a count (-1 for every one). */
function deviceRequest(gpus: GpuRequest) {
  const ids = typeof gpus === 'object' ? [...gpus] : null;
  return {
    Driver: '',
    Count: ids ? 0 : gpus === 'all' ? -1 : gpus,
    DeviceIDs: ids,
    Capabilities: [['gpu']],
    Options: {},
  };
}

/** The image must exist, and carry the agent environment's lock when steps use it: say how to make it when not. */
export async function checkImage(
  docker: Docker,
  image: string,
  agentLock?: string,
  where = process.env.DOCKER_HOST ?? 'the local socket',
): Promise<void> {
  const build = `\`bash sandbox/image/build.sh${image === DEFAULT_IMAGE ? '' : ` ${image}`}\``;
  let labels: Record<string, string> | undefined;
  try {
    labels = (await docker.getImage(image).inspect()).Config?.Labels ?? undefined;
  } catch (err) {
    const code = (err as { statusCode?: number }).statusCode;
    if (code === 404) {
      throw new EnvError(
        `docker image ${image} not found; build it with ${build} (docker import of this machine's Python stack and agent environment) ` +
          `or \`docker build -t ${image} -f sandbox/image/Dockerfile .\` where a registry is reachable`,
      );
    }
    throw new EnvError(`no Docker engine at ${where}: ${(err as Error).message.split('\n')[0]}`);
  }
  const baked = labels?.[AGENT_LOCK_LABEL];
  if (agentLock && baked !== agentLock) {
    // Steps would run other package versions than the node keys record.
    throw new EnvError(
      `docker image ${image} ${baked ? `holds another agent environment (lock ${baked.slice(0, 12)}, installed ${agentLock.slice(0, 12)})` : 'has no agent environment'}; rebuild it with ${build}`,
    );
  }
}

/** The container user (nobody) must be able to write the workspace. */
export async function shareWorkspace(ws: string): Promise<void> {
  await chown(ws, NOBODY, NOBODY).catch(() => chmod(ws, 0o777));
}

/** Capped collectors of a step's output. */
function collect(io: Attached, maxBytes: number): { out: CappedOutput; err: CappedOutput } {
  const out = new CappedOutput(maxBytes);
  const err = new CappedOutput(maxBytes);
  io.stdout.on('data', (b: Buffer) => out.push(b));
  io.stderr.on('data', (b: Buffer) => err.push(b));
  return { out, err };
}

/** The engine's OOM events for one container: listeners come and go; `close` ends the stream. */
export async function oomEvents(
  docker: Docker,
  id: string,
): Promise<{ on(fn: () => void): () => void; close(): void }> {
  const listeners = new Set<() => void>();
  const stream = (await docker.getEvents({ filters: { container: [id], event: ['oom'] } })) as unknown as Readable;
  stream.on('data', () => {
    for (const fn of [...listeners]) fn();
  });
  stream.on('error', () => {});
  return {
    on(fn) {
      listeners.add(fn);
      return () => listeners.delete(fn);
    },
    close: () => stream.destroy(),
  };
}

/** A remote engine's task store for a backend that was given none to share (DOCKER_HOST set by hand). */
export function ownStore(engine: () => Promise<Docker>, opts: DockerOptions): TaskStore {
  return taskStore(
    engine,
    opts.image ?? DEFAULT_IMAGE,
    imagePython(opts.python ?? '/usr/bin/python3').path,
    opts.where ?? process.env.DOCKER_HOST ?? 'the engine',
  );
}

/** What every step of one backend shares: its engine, image, interpreter and task store. */
interface Engine {
  opts: DockerOptions;
  engine: () => Promise<Docker>;
  image: string;
  python: string;
  local: boolean;
  tasks?: TaskStore;
}

/** `store`: the task store of another machine's engine, when the caller shares one between backends. */
export function dockerBackend(opts: DockerOptions = {}, store?: TaskStore): Backend {
  const engine = lazyEngine(opts.docker);
  const { path: python, agentLock } = imagePython(opts.python ?? '/usr/bin/python3');
  const local = !opts.remote && engineIsLocal();
  const e: Engine = {
    opts,
    engine,
    image: opts.image ?? DEFAULT_IMAGE,
    python,
    local,
    tasks: local ? undefined : (store ?? ownStore(engine, opts)),
  };
  return {
    name: 'docker',
    async open(so: SessionOptions): Promise<Session> {
      await checkImage(await engine(), e.image, agentLock, opts.where);
      const removals = new Set<Promise<unknown>>();
      // The session's GPUs, held from its first step to its close.
      const held = holdGpus(
        opts.lender,
        opts.gpus,
        () => new EnvError(`${opts.where ?? 'the engine'}: no free GPU for another run`),
      );
      try {
        return await coldSession(
          'docker',
          so,
          (step, limits, where) => runStep(e, step, limits, where, { signal: so.signal, removals, gpus: held.gpus }),
          {
            prepare: ({ workspace }) => shareWorkspace(workspace),
            close: () => Promise.all([...removals]).finally(held.release),
          },
        );
      } catch (err) {
        held.release();
        throw err;
      }
    },
  };
}

const interruptedStep = (limits: Limits): StepResult =>
  finishStep({ exitCode: 125, stdout: '', stderr: '', truncated: false, durationMs: 0, backend: 'docker' }, limits, {
    interrupted: true,
  });

/** One step: a fresh container over the session's workspace, removed in the background (see `removals`). */
async function runStep(
  e: Engine,
  step: Step,
  limits: Limits,
  { workspace, pub }: Where,
  run: { signal?: AbortSignal; removals: Set<Promise<unknown>>; gpus?: GpuRequest },
): Promise<StepResult> {
  const { opts, local } = e;
  if (run.signal?.aborted) return interruptedStep(limits);
  // The container has a PID namespace of its own: its launcher may kill everything in it at the timeout.
  const cmd = launcherArgv(e.python, limits, true, '/workspace', step, true);
  const docker = await e.engine();
  const c = await createContainer(
    docker,
    containerOptions(e.image, cmd, limits, local ? { ws: workspace, pub } : null, { gpus: run.gpus }),
    { reap: local },
  ).catch((err: Error) => {
    throw engineFault(opts, `docker could not create the step's container: ${err.message.split('\n')[0]}`);
  });
  let oom: Awaited<ReturnType<typeof oomEvents>> | undefined;
  let io: Attached | undefined;
  try {
    // A fresh container: the whole workspace goes, and the link to the task's files in the host's store.
    const mirror = local ? undefined : new WorkspaceMirror(workspace);
    if (mirror) {
      await mirror
        .push(c.raw, async () => {})
        .catch(lostEngine(opts, "could not send the workspace to the step's container"));
      await sendPublicLink(c.raw, await e.tasks!.ensure(pub)).catch(
        lostEngine(opts, "could not show the task to the step's container"),
      );
    }
    io = await c.attach();
    const { out, err } = collect(io, limits.maxOutputBytes);
    oom = await oomEvents(docker, c.id);
    const ran = await startAndWait(opts, c, oom, limits, run.signal);
    if (!ran) return interruptedStep(limits);
    await waitAtMost(io.ended, 1000);
    const durationMs = Math.round(performance.now() - ran.t0);
    const state = (await c.raw.inspect()).State;
    // The workspace comes back from a remote engine, public/ left out, files the step deleted deleted here.
    await mirror?.pull(c.raw).catch(lostEngine(opts, "could not bring the workspace back from the step's container"));
    const raw = {
      exitCode: ran.exitCode,
      stdout: out.text(),
      stderr: err.text(),
      truncated: out.truncated || err.truncated,
      durationMs,
      backend: 'docker' as const,
    };
    return {
      ...finishStep(raw, limits, { ...ran.end, oomKilled: ran.end.oomKilled || state.OOMKilled }),
      ...(await workspaceCheck(workspace, limits)),
    };
  } finally {
    oom?.close();
    io?.close();
    // The result does not wait for the engine to remove the container; closing the session does.
    const removed = c.remove();
    run.removals.add(removed);
    void removed.then(() => run.removals.delete(removed));
  }
}

/**
 * Starts the step's container and waits for it to end, stopping it at the timeout, on an OOM kill or on an
 * interrupt; nothing when the interrupt came before it started.
 */
async function startAndWait(
  opts: DockerOptions,
  c: Container,
  oom: Awaited<ReturnType<typeof oomEvents>>,
  limits: Limits,
  signal: AbortSignal | undefined,
) {
  const { end, stop } = stopper(() => c.kill());
  if (signal?.aborted) return undefined;
  // The step's time runs from the request to start it (creating the container is the engine's overhead):
  // the host's timer then always fires before the launcher's own, which starts later.
  const t0 = performance.now();
  const timer = setTimeout(() => stop('timedOut'), limits.timeoutMs);
  await c.start().catch((err: Error) => {
    clearTimeout(timer);
    throw engineFault(opts, `docker could not start the step's container: ${err.message.split('\n')[0]}`);
  });
  // A process killed for the memory cap ends the whole step, as on the other backends.
  const unwatch = oom.on(() => stop('oomKilled'));
  const unabort = signal ? onceAborted(signal, () => stop('interrupted')) : () => {};
  const exitCode = await c
    .wait()
    .finally(() => {
      clearTimeout(timer);
      unwatch();
      unabort();
    })
    .catch((err: Error) => {
      throw engineFault(opts, `docker lost the step's container: ${err.message.split('\n')[0]}`);
    });
  return { exitCode, end, t0 };
}
