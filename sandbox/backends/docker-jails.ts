// Warm jails in containers: the server is the container's main process,
// spoken to over attach. Local engines only (the slot's folders are bind
// mounts).
import { createContainer, DEFAULT_IMAGE } from '../containers.js';
import { oomCounterOf, watchOom } from '../cgroup.js';
import { imagePython } from '../interpreter.js';
import type { Limits } from '../types.js';
import { SERVER_MB, type JailHandle, type JailLauncher, type Slot } from '../warm/jail.js';
import { checkImage, containerOptions, engineIsLocal, lazyEngine, oomEvents, shareWorkspace, type DockerOptions } from './docker.js';

export function dockerJails(opts: DockerOptions = {}): JailLauncher {
  const engine = lazyEngine(opts.docker);
  const image = opts.image ?? DEFAULT_IMAGE;
  const { agentLock } = imagePython(opts.python ?? '/usr/bin/python3');
  return {
    kind: 'warm-docker',
    async start(slot: Slot, limits: Limits, argv: string[]): Promise<JailHandle> {
      if (!engineIsLocal()) throw new Error('warm executors need a local Docker engine (bind mounts); remote engines use cold steps');
      const docker = await engine();
      await checkImage(docker, image, agentLock);
      await shareWorkspace(slot.ws);
      const c = await createContainer(
        docker,
        // The server shares the container with the step: room for it in memory and CPU, so a step that
        // exhausts its own share cannot starve the server that enforces its timeout.
        containerOptions(image, argv, limits, { ws: slot.ws, pub: slot.pub }, { gpus: opts.gpus, openStdin: true, memoryMb: limits.memoryMb + SERVER_MB, cpus: limits.cpus + 1 }),
        // Removed by the watchdog should mlepipe die while it exists.
        { reap: true },
      );
      try {
        const io = await c.attach({ stdin: true });
        await c.start();
        // The container's own OOM-kill counter where this machine lets us read it: the engine's events
        // arrive late under load, and one from an earlier step's kills would end the next step. No step
        // runs before the first watch, so the events, where they are the fallback, start early enough here.
        const counter = await oomCounterOf((await c.raw.inspect()).State.Pid);
        const oom = counter ? undefined : await oomEvents(docker, c.id);
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
          },
        };
      } catch (err) {
        await c.remove();
        throw err;
      }
    },
  };
}
