// The sandbox a stage runs agent or generated code in: the project's backend,
// served by a pool of warm executors the size of the stage's concurrency.
import { KIT_MODULES } from '../../agents/policies/kitcode.js';
import { UserError } from '../../core/errors.js';
import { engineAt } from '../../sandbox/hosts.js';
import { GpuLender } from '../../sandbox/gpus.js';
import { createSandbox, type Limits, type Sandbox } from '../../sandbox/index.js';
import { spreadSandbox } from '../../sandbox/spread.js';
import { SUITE_MODULES } from '../../tasks/mltoolbench.js';
import { TOOL_MODULES } from '../../tools/index.js';
import type { SandboxHost, StageContext } from '../contract.js';

/** What each run's jail is given: its memory (the stage's memory_mb) and, from sandbox: cpus_per_run, its CPUs. */
export type RunLimits = Partial<Pick<Limits, 'memoryMb' | 'cpus'>>;

/**
 * `modules` is what the stage's own steps import, when it knows (procedural task generation, the solution
 * kit's agents): a jail then skips the rest of the agent environment's stack (torch and XGBoost are about
 * half of a jail's start-up). The project's `sandbox.preload` still wins; without either, the agent
 * environment's. `run` sizes the jails themselves (their cgroup or container), not only each step's
 * own limits: a jail smaller than its steps' memory_mb would kill them below it.
 */
export function stageSandbox(
  ctx: StageContext<unknown>,
  poolSize: number,
  modules?: readonly string[],
  run: RunLimits = {},
): Sandbox {
  const limits = { ...run, ...(ctx.sandboxRun?.cpus ? { cpus: ctx.sandboxRun.cpus } : {}) };
  if (ctx.sandboxHosts?.length) {
    const modulesThere = ctx.sandbox.preload ?? modules;
    return hostSandboxes({
      hosts: ctx.sandboxHosts,
      run: ctx.sandboxRun,
      image: ctx.sandbox.image,
      python: ctx.python,
      poolSize,
      limits,
      log: ctx.log,
      signal: ctx.signal,
      ...(modulesThere ? { modules: modulesThere } : {}),
    });
  }
  return createSandbox({
    backend: ctx.sandbox.backend,
    image: ctx.sandbox.image,
    warm: true,
    poolSize,
    limits,
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

/** What scripted agents under the mlab scaffold run: the kit, the suite's starters and the tools. */
const MLAB_MODULES: readonly string[] = [...new Set([...KIT_MODULES, ...SUITE_MODULES, ...TOOL_MODULES])];

/**
 * What an eval or grpo stage's jails preload, from who writes the code its steps run: a model may import
 * anything the agent environment has (undefined: all of it); scripted agents and the template policy run
 * the kit's code, and under the mlab scaffold also the suite's starters and the diagnostic tools, none of
 * which import torch or XGBoost (about half of a jail's start-up).
 */
export function preloadFor(o: { models: boolean; mlab: boolean }): readonly string[] | undefined {
  if (o.models) return undefined;
  return o.mlab ? MLAB_MODULES : KIT_MODULES;
}

/** Where and how a stage's (or the verl sandbox service's) jails run on hosts' engines. */
export interface HostSandboxes {
  readonly hosts: readonly SandboxHost[];
  /** What each run holds there: GPUs (device ids from each host's lender) and CPUs. */
  readonly run?: { readonly gpus?: number; readonly cpus?: number };
  readonly image?: string;
  readonly python: string;
  readonly poolSize: number;
  readonly modules?: readonly string[];
  readonly limits: RunLimits;
  readonly log: (line: string) => void;
  readonly signal?: AbortSignal;
}

/**
 * `sandbox: { on: }`: each session a warm jail in a container on one of the hosts' engines (docker backend,
 * the project's sandbox image, which each host must have), spread by how many sessions each holds. The
 * task's public/ files go to each host once, into its task store; the workspace goes there as archives and
 * comes back after each step; private/ never leaves this machine, where the grader runs. With
 * gpus_per_run, each jail holds that many of its host's GPUs, and a host as many runs as it has GPUs for.
 */
export function hostSandboxes(o: HostSandboxes): Sandbox {
  const perRun = o.run?.gpus ?? 0;
  const cpusPerRun = o.run?.cpus ?? 0;
  const hosts = o.hosts.map((h) => {
    const lender = perRun > 0 && h.gpus !== undefined ? new GpuLender(h.gpus, perRun) : undefined;
    return { ...h, lender, slots: runSlots(h, perRun, cpusPerRun, lender) };
  });
  // Hosts with too few GPUs or CPUs for one run take none (loading refused the stage if no host has enough).
  const able = hosts.filter((h) => h.slots > 0);
  for (const h of hosts.filter((x) => !able.includes(x)))
    o.log(
      `host ${h.name} ${h.lender?.slots === 0 || (perRun > 0 && !h.lender) ? `has fewer than ${perRun} GPUs free for them` : `has fewer than ${cpusPerRun} CPUs`}: it runs none of these sandboxes`,
    );
  const each = [perRun > 0 ? `${perRun} GPUs` : '', cpusPerRun > 0 ? `${cpusPerRun} CPUs` : '']
    .filter(Boolean)
    .join(' and ');
  if (!able.length) throw new UserError(`no host of ${hosts.map((h) => h.name).join(', ')} can hold a run of ${each}`);
  o.log(
    `sandboxes on ${able.map((h) => `${h.name} (${h.docker}${Number.isFinite(h.slots) ? `, ${h.slots} runs of ${each}` : ''})`).join(', ')}`,
  );
  // The jails shared out: each host keeps its part of them started ahead of need, no more than it can hold.
  const share = Math.max(1, Math.ceil(o.poolSize / able.length));
  return spreadSandbox(
    able.map((h) => {
      const engine = { client: () => engineAt(h), where: `${h.name} (${h.docker})`, host: h.name };
      return {
        name: h.name,
        slots: h.slots,
        box: createSandbox({
          backend: 'docker',
          image: o.image,
          warm: true,
          poolSize: Math.min(share, h.slots),
          modules: o.modules,
          limits: o.limits,
          python: o.python,
          engine,
          lender: h.lender,
          warn: (m) => o.log(`warning: ${h.name}: ${m}`),
          signal: o.signal,
        }),
      };
    }),
    o.log,
  );
}

/**
 * Runs a host holds at once: as many as its GPUs allow (a lender's slots; none when the run needs GPUs and
 * the host lends none) and, where it counts its CPUs, as many as they allow; else no limit.
 */
export function runSlots(
  host: Pick<SandboxHost, 'gpus' | 'cpus'>,
  gpusPerRun: number,
  cpusPerRun: number,
  lender?: GpuLender,
): number {
  const byGpus = gpusPerRun > 0 ? (lender?.slots ?? (host.gpus === undefined ? 0 : Infinity)) : Infinity;
  const byCpus = cpusPerRun > 0 && host.cpus !== undefined ? Math.floor(host.cpus / cpusPerRun) : Infinity;
  return Math.min(byGpus, byCpus);
}
