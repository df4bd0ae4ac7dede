// Warm jails in containers: the server is the container's main process,
// spoken to over attach. Local engines only (the slot's folders are bind
// mounts).
import { PassThrough, type Readable, type Writable } from 'node:stream';
import { reapContainer } from '../../core/reaper.js';
import { oomCounterOf, watchOom } from '../cgroup.js';
import { imagePython } from '../interpreter.js';
import type { Limits } from '../types.js';
import { SERVER_MB, type JailHandle, type JailLauncher, type Slot } from '../warm/jail.js';
import { checkImage, containerOptions, DEFAULT_IMAGE, engineIsLocal, lazyEngine, oomEvents, shareWorkspace, type DockerOptions } from './docker.js';

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
      const c = await docker.createContainer(
        // The server shares the container with the step: room for it in memory and CPU, so a step that
        // exhausts its own share cannot starve the server that enforces its timeout.
        containerOptions(image, argv, limits, { ws: slot.ws, pub: slot.pub }, { gpus: opts.gpus, openStdin: true, memoryMb: limits.memoryMb + SERVER_MB, cpus: limits.cpus + 1 }),
      );
      // Removed by the watchdog should mlepipe die while it exists.
      const unreap = reapContainer(c.id);
      const remove = () => c.remove({ force: true }).catch(() => {}).then(unreap);
      try {
        const stream = (await c.attach({ stream: true, stdin: true, stdout: true, stderr: true, hijack: true })) as unknown as NodeJS.ReadWriteStream & Readable;
        const stdout = new PassThrough();
        const stderr = new PassThrough();
        docker.modem.demuxStream(stream, stdout, stderr);
        stream.once('end', () => {
          stdout.end();
          stderr.end();
        });
        await c.start();
        // The container's own OOM-kill counter where this machine lets us read it: the engine's events
        // arrive late under load, and one from an earlier step's kills would end the next step. No step
        // runs before the first watch, so the events, where they are the fallback, start early enough here.
        const counter = await oomCounterOf((await c.inspect()).State.Pid);
        const oom = counter ? undefined : await oomEvents(docker, c.id);
        return {
          stdin: stream as unknown as Writable,
          stdout,
          stderr,
          exited: c.wait().then(
            () => undefined,
            () => undefined,
          ),
          countsProcesses: true,
          watchOom: async (onOom) => (counter ? watchOom(counter, onOom, await counter.oomKills()) : oom!.on(onOom)),
          async stop() {
            oom?.close();
            await remove();
          },
        };
      } catch (err) {
        await remove();
        throw err;
      }
    },
  };
}
