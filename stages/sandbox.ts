// The sandbox a stage runs agent or generated code in: the project's backend,
// served by a pool of warm executors the size of the stage's concurrency.
import { engineAt } from '../sandbox/hosts.js';
import { createSandbox, type Sandbox } from '../sandbox/index.js';
import { spreadSandbox } from '../sandbox/spread.js';
import type { StageContext } from './contract.js';

/**
 * `modules` is what the stage's own steps import, when it knows (procedural task generation, the solution
 * kit's agents): a jail then skips the rest of the agent environment's stack (torch and XGBoost are about
 * half of a jail's start-up). The project's `sandbox.preload` still wins; without either, the agent
 * environment's.
 */
export function stageSandbox(ctx: StageContext<unknown>, poolSize: number, modules?: readonly string[]): Sandbox {
  if (ctx.sandboxHosts?.length) return hostSandboxes(ctx);
  return createSandbox({
    backend: ctx.sandbox.backend,
    image: ctx.sandbox.image,
    warm: true,
    poolSize,
    // The interpreter the node key records: run on the host by the process backend, mounted
    // into bwrap jails, its baked copy in the docker image (sandbox/interpreter.ts).
    python: ctx.python,
    modules: ctx.sandbox.preload ?? modules,
    // The project chose the process backend by name in its settings.
    explicit: ctx.sandbox.backend === 'process',
    warn: (m) => ctx.log(`warning: ${m}`),
    signal: ctx.signal,
  });
}

/**
 * `sandbox: { on: }`: each session a container on one of the hosts' engines (docker backend, the project's
 * sandbox image, which each host must have), spread by how many sessions each holds. The task's public/
 * and the workspace go there as archives and the workspace comes back after each step; private/ never
 * leaves this machine, where the grader runs.
 */
function hostSandboxes(ctx: StageContext<unknown>): Sandbox {
  const hosts = ctx.sandboxHosts!;
  ctx.log(`sandboxes on ${hosts.map((h) => `${h.name} (${h.docker})`).join(', ')}`);
  return spreadSandbox(
    hosts.map((h) => ({
      name: h.name,
      box: createSandbox({ backend: 'docker', image: ctx.sandbox.image, python: ctx.python, engine: { client: () => engineAt(h), where: `${h.name} (${h.docker})` }, warn: (m) => ctx.log(`warning: ${h.name}: ${m}`), signal: ctx.signal }),
    })),
    (m) => ctx.log(m),
  );
}
