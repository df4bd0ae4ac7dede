// The sandbox a stage runs agent or generated code in: the project's backend,
// served by a pool of warm executors the size of the stage's concurrency.
import { createSandbox, type Sandbox } from '../sandbox/index.js';
import type { StageContext } from './contract.js';

export function stageSandbox(ctx: StageContext<unknown>, poolSize: number): Sandbox {
  return createSandbox({
    backend: ctx.sandbox.backend,
    image: ctx.sandbox.image,
    warm: true,
    poolSize,
    // The process backend runs the chosen interpreter on the host. Jails run
    // their own (the host's /usr/bin/python3 under bwrap, the image's under docker).
    python: ctx.sandbox.backend === 'process' ? ctx.python : undefined,
    // The project chose the process backend by name in its settings.
    explicit: ctx.sandbox.backend === 'process',
    warn: (m) => ctx.log(`warning: ${m}`),
    signal: ctx.signal,
  });
}
