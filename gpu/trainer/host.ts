// A trainer worker in a container on a host's Docker engine, for a `grpo` or
// `sft` node placed with `on:`. The container runs the image's `python3`
// (which must have the worker's packages); the worker's code and the
// model's folder go up as archives before it starts, so the worker always
// matches this mlepipe. The container shares the host's network: the worker
// takes a free port there, says which in its "listening" line, and is reached
// at the engine's address (loopback for a unix:// engine), or, on an ssh://
// host, listens on the host's loopback only and is reached through an SSH
// tunnel with the host's key (no port open to the network). Engines started
// without a bridge network cannot publish ports at all, and a training
// worker gains nothing from a second network layer. Checkpoints stay on the
// container's disk until they are fetched back with `pull`; whatever
// happens, `stop` removes the container.
import type Docker from 'dockerode';
import { join } from 'node:path';
import { packageRoot } from '../../core/assets.js';
import { EnvError } from '../../core/errors.js';
import { createContainer, envList, type Container } from '../../sandbox/containers.js';
import { engineAt, sshAgentOf, type EngineSpec } from '../../sandbox/hosts.js';
import { TrainerClient } from './client.js';
import { serveArgs, type LocalWorker, type LocalWorkerOptions } from './local.js';
import { IN_CONTAINER, oneLine, putDir, WorkerContainer } from './worker-container.js';

/** The image a worker runs in where the host names none. */
export const DEFAULT_TRAINER_IMAGE = 'mlepipe-trainer:latest';

export interface HostWorkerOptions extends Pick<
  LocalWorkerOptions,
  'model' | 'loraRank' | 'threads' | 'args' | 'log' | 'signal' | 'startTimeoutMs'
> {
  /** The engine (its address, and the SSH key, known_hosts or TLS files that reach it). */
  host: EngineSpec & {
    name: string;
    image: string;
    env: Readonly<Record<string, string>>;
    deviceRequests?: Docker.DeviceRequest[];
  };
  /** The node the worker serves (a label on the container, to find it by on the host). */
  node: string;
}

export interface HostWorker extends LocalWorker {
  readonly hostName: string;
  /** The worker's checkpoint folder in the container. */
  readonly ckptDir: string;
  /** Why the container ended, once it has (host named, exit code, out of memory). */
  exitNote(): string | undefined;
  /** Copies a folder of the container into `localDir` (replacing it whole; written aside, then renamed). */
  pull(containerPath: string, localDir: string): Promise<void>;
  /** Sends a local folder up; returns its path in the container. */
  push(localDir: string): Promise<string>;
  /** Deletes a path in the container (checkpoints already fetched). */
  drop(containerPath: string): Promise<void>;
}

/** The address this machine reaches the host's ports at. */
export function hostAddress(docker: string): string {
  const url = new URL(docker);
  return url.protocol === 'unix:' ? '127.0.0.1' : url.hostname;
}

export async function startHostWorker(o: HostWorkerOptions): Promise<HostWorker> {
  const { host } = o;
  const at = `host ${host.name}`;
  const docker = await engineAt(host);
  await docker.ping().catch((err: Error) => {
    throw new EnvError(`${at} (${host.docker}) is unreachable: ${oneLine(err)}`);
  });
  const ssh = sshAgentOf(docker);
  const args = serveArgs({
    ...o,
    model: 'dir' in o.model ? { dir: IN_CONTAINER.model } : o.model,
    host: ssh ? '127.0.0.1' : '0.0.0.0',
    port: 0,
    ckptDir: IN_CONTAINER.ckpt,
  });
  const w = new WorkerContainer(await createWorkerContainer(docker, o, args, at), at, o.log);
  try {
    await putDir(w.c, join(packageRoot(), 'gpu', 'worker', 'mlepipe_worker'), `${IN_CONTAINER.worker}/mlepipe_worker`);
    if ('dir' in o.model) await putDir(w.c, o.model.dir, IN_CONTAINER.model);
    const port = await w.start(o.startTimeoutMs ?? 600_000, o.signal);
    w.tunnel = ssh
      ? await ssh.forward(Number(port)).catch((err: Error) => {
          throw new EnvError(
            `${at}: could not open an SSH tunnel to the trainer worker's port ${port}: ${oneLine(err)}`,
          );
        })
      : undefined;
    const url = w.tunnel?.url ?? `http://${hostAddress(host.docker)}:${port}`;
    o.log(
      `trainer worker on ${at}: container ${w.c.id.slice(0, 12)}, ${w.tunnel ? `listening on port ${port} of the host's loopback, reached through the SSH connection at ${url}` : `reached at ${url}`}`,
    );
    const client = new TrainerClient(url);
    const health = await client.health(o.signal).catch((err: Error) => {
      throw new EnvError(
        w.tunnel
          ? `${at}: the trainer worker listens on port ${port} there, but does not answer through the SSH connection (${oneLine(err)}); the host's sshd must allow TCP forwarding`
          : `${at}: the trainer worker listens on port ${port} there, but ${url} does not answer from this machine (${oneLine(err)}); the host must let this machine reach its ports`,
      );
    });
    return {
      url,
      client,
      health,
      exited: w.exited,
      hostName: host.name,
      ckptDir: IN_CONTAINER.ckpt,
      exitNote: () => w.exitNote(),
      stop: () => w.stop(),
      pull: (containerPath, localDir) => w.pull(containerPath, localDir),
      push: (localDir) => w.push(localDir),
      drop: (containerPath) => w.drop(containerPath),
    };
  } catch (err) {
    await w.remove();
    throw err;
  }
}

/** The worker's container, created but not started; a missing image is named as such. */
async function createWorkerContainer(
  docker: Docker,
  o: HostWorkerOptions,
  args: string[],
  at: string,
): Promise<Container> {
  const { host } = o;
  return createContainer(
    docker,
    {
      Image: host.image,
      Cmd: ['python3', ...args],
      WorkingDir: IN_CONTAINER.worker,
      Env: envList({ ...host.env, PYTHONUNBUFFERED: '1', TOKENIZERS_PARALLELISM: 'false', MLEPIPE_HOST: host.name }),
      Labels: { 'mlepipe.node': o.node, 'mlepipe.role': 'trainer-worker' },
      HostConfig: {
        Init: true,
        NetworkMode: 'host',
        ...(host.deviceRequests?.length ? { DeviceRequests: host.deviceRequests } : {}),
      },
    },
    // The watchdog reaches only this machine's engine; other engines' containers go in stop().
    { reap: host.docker.startsWith('unix://') },
  ).catch((err: { statusCode?: number } & Error) => {
    if (err.statusCode === 404)
      throw new EnvError(
        `${at}: image ${host.image} not found there (build or pull it on ${host.name}, or set hosts.${host.name}.image)`,
      );
    throw new EnvError(`${at}: could not create the trainer worker's container: ${oneLine(err)}`);
  });
}
