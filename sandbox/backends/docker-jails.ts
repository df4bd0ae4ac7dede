// Warm jails in containers: the server is the container's main process,
// spoken to over attach. On this machine's engine the slot's folders are bind
// mounts; on another machine's (a host's) the jail has a workspace of its own,
// kept in step with the slot's by archives around each step, and reads its
// task's files from that engine's task store.
import type Docker from 'dockerode';
import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { EnvError } from '../../core/errors.js';
import { createContainer, DEFAULT_IMAGE, engineSilence, type Container } from '../containers.js';
import { oomCounterOf, watchOom } from '../cgroup.js';
import { imagePython } from '../interpreter.js';
import { sendPublicLink, WorkspaceMirror } from '../mirror.js';
import { holdGpus } from '../gpus.js';
import type { TaskStore } from '../task-store.js';
import type { Limits } from '../types.js';
import { SERVER_MB, type FarJail, type JailHandle, type JailLauncher, type Slot } from '../warm/jail.js';
import {
  checkImage,
  containerOptions,
  engineFault,
  engineIsLocal,
  lazyEngine,
  lostEngine,
  oomEvents,
  ownStore,
  shareWorkspace,
  type DockerOptions,
} from './docker.js';

const cpuCounts = new WeakMap<Docker, Promise<number>>();
/** The engine machine's CPUs (asked once per client). */
function cpusOf(docker: Docker): Promise<number> {
  let n = cpuCounts.get(docker);
  if (!n) {
    n = docker.info().then(
      (i: { NCPU?: number }) => i.NCPU ?? Infinity,
      () => Infinity,
    );
    cpuCounts.set(docker, n);
  }
  return n;
}

/** What every jail of one launcher shares: its engine, image and task store. */
interface Launcher {
  opts: DockerOptions;
  engine: () => Promise<Docker>;
  image: string;
  agentLock?: string;
  local: boolean;
  tasks?: TaskStore;
}

/** `store`: the task store of another machine's engine, when the caller shares one between backends. */
export function dockerJails(opts: DockerOptions = {}, store?: TaskStore): JailLauncher {
  const engine = lazyEngine(opts.docker);
  const local = !opts.remote && engineIsLocal();
  const l: Launcher = {
    opts,
    engine,
    image: opts.image ?? DEFAULT_IMAGE,
    agentLock: imagePython(opts.python ?? '/usr/bin/python3').agentLock,
    local,
    tasks: local ? undefined : (store ?? ownStore(engine, opts)),
  };
  return {
    kind: 'warm-docker',
    // On another machine's engine the server watches its container's OOM count itself (see oomEvents below).
    ...(local ? {} : { serverConfig: { own_oom: true } }),
    start: (slot, limits, argv) => startJail(l, slot, limits, argv),
  };
}

async function startJail(l: Launcher, slot: Slot, limits: Limits, argv: string[]): Promise<JailHandle> {
  const { opts, local } = l;
  const docker = await l.engine();
  await checkImage(docker, l.image, l.agentLock, opts.where);
  await shareWorkspace(slot.ws);
  // The jail's GPUs from the host's share, held until the jail stops (a reused jail keeps them).
  const held = holdGpus(
    opts.lender,
    opts.gpus,
    () => new EnvError(`${opts.where ?? 'the engine'}: no free GPU for another jail`),
  );
  // The server's extra CPU only where the machine has one more: an engine refuses a quota over its CPUs.
  const cpus = Math.min(limits.cpus + 1, Math.max(limits.cpus, await cpusOf(docker)));
  const spec = containerOptions(l.image, argv, limits, local ? { ws: slot.ws, pub: slot.pub } : null, {
    gpus: held.gpus,
    openStdin: true,
    memoryMb: limits.memoryMb + SERVER_MB,
    cpus,
  });
  const c = await createContainer(
    docker,
    // The server shares the container with the step: room for it in memory and CPU, so a step that
    // exhausts its own share cannot starve the server that enforces its timeout.
    spec,
    // Removed by the watchdog should mlepipe die while it exists; on another engine, by the engine once
    // the server's stdin closes (AutoRemove), which the lost connection does.
    { reap: local },
  ).catch((err: Error) => {
    held.release();
    throw err;
  });
  try {
    const io = await c.attach({ stdin: true });
    await c.start();
    // The container's own OOM-kill counter where this machine lets us read it: the engine's events
    // arrive late under load, and one from an earlier step's kills would end the next step. No step
    // runs before the first watch, so the events, where they are the fallback, start early enough here.
    const counter = local ? await oomCounterOf((await c.raw.inspect()).State.Pid) : undefined;
    const oom = counter ? undefined : await oomEvents(docker, c.id);
    const far = local ? undefined : farJail(l, docker, c, slot);
    return {
      stdin: io.stdin!,
      stdout: io.stdout,
      stderr: io.stderr,
      // A lost engine ends the jail as its exit would.
      exited: c.wait().then(
        () => undefined,
        () => undefined,
      ),
      countsProcesses: true,
      watchOom: async (onOom) => (counter ? watchOom(counter, onOom, await counter.oomKills()) : oom!.on(onOom)),
      async stop() {
        oom?.close();
        await c.remove();
        held.release();
      },
      ...(far ? { far } : {}),
    };
  } catch (err) {
    await c.remove();
    held.release();
    throw err;
  }
}

/** A jail on another machine's engine: its workspace kept in step with the slot's, its task from that engine's store. */
function farJail(l: Launcher, docker: Docker, c: Container, slot: Slot): FarJail {
  const { opts } = l;
  const lost = (what: string) => lostEngine(opts, what);
  const mirror = new WorkspaceMirror(slot.ws);
  return {
    async assign(pub, remove) {
      const target = await l.tasks!.ensure(pub);
      await remove(['public']);
      await sendPublicLink(c.raw, target).catch(lost('could not show the task to the jail'));
      mirror.clear();
    },
    push: (remove) => mirror.push(c.raw, remove).catch(lost("could not send the workspace to the step's jail")),
    pull: () => mirror.pull(c.raw).catch(lost("could not bring the workspace back from the step's jail")),
    async check() {
      const why = await engineSilence(docker);
      if (why)
        throw engineFault(
          opts,
          `${opts.where ?? 'the engine'}: lost the step's jail: the engine does not answer (${why})`,
        );
    },
    async clear() {
      mirror.clear();
      const names = (await readdir(slot.ws)).filter((n) => n !== 'public');
      await Promise.all(names.map((n) => rm(join(slot.ws, n), { recursive: true, force: true })));
    },
  };
}
