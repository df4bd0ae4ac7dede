// `mlepipe sandbox serve --export DIR`: the sandbox service a verl export's
// agent loop and reward function call (gpu/verl/service.ts), in the
// foreground until Ctrl-C or SIGTERM. It prints one line,
// `mlepipe sandbox service listening on URL`, once it accepts requests.
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { UserError } from '../../core/errors.js';
import { onceAborted } from '../../core/proc.js';
import { defaultPython } from '../../core/python.js';
import { parseFormula } from '../../core/rewards/parse.js';
import { REWARD_PRESETS } from '../../core/rewards/presets.js';
import { exportServing, loopback, startSandboxService, type ExportServing } from '../../gpu/verl/service.js';
import { defaultGpus, gpuCapacity, hostsFor } from '../../pipelines/config/hosts.js';
import { loadSettings } from '../../pipelines/config/settings.js';
import { sandboxPlacement } from '../../pipelines/run/hosts.js';
import { starterScore } from '../../stages/shared/tasks.js';
import { hostSandboxes } from '../../stages/shared/sandbox.js';
import { integerFlag } from '../flags.js';
import type { IO } from '../io.js';
import { sandboxFromSettings } from './sandbox.js';

export interface SandboxServeArgs {
  export?: string;
  tasks?: string;
  reward?: string;
  host?: string;
  port?: string;
  backend?: string;
  memoryMb?: string;
  warm?: boolean;
  /** A host name or label of the settings' hosts: the jails run as containers on their engines. */
  on?: string;
  gpusPerRun?: string;
  cpusPerRun?: string;
}

/** Where the tasks are and what grades them: an export's tasks/ and sandbox.json, or --tasks and --reward. */
async function source(a: SandboxServeArgs): Promise<ExportServing> {
  if (a.export) {
    const dir = resolve(a.export);
    if (!existsSync(join(dir, 'sandbox.json'))) throw new UserError(`${a.export}: not a verl export (no sandbox.json)`);
    return exportServing(dir);
  }
  if (!a.tasks || !a.reward)
    throw new UserError('sandbox serve: give --export DIR, or --tasks DIR and --reward FORMULA');
  if (!existsSync(a.tasks)) throw new UserError(`--tasks ${a.tasks}: no such folder`);
  return { tasksDir: resolve(a.tasks), reward: REWARD_PRESETS[a.reward] ?? a.reward, memoryMb: 2048 };
}

export async function sandboxServeCommand(a: SandboxServeArgs, io: IO): Promise<number> {
  const src = await source(a);
  try {
    parseFormula(src.reward);
  } catch (err) {
    throw new UserError(`reward formula ${JSON.stringify(src.reward)}: ${(err as Error).message}`);
  }
  const port = integerFlag('--port', a.port, 0, 65535);
  const memoryMb = integerFlag('--memory-mb', a.memoryMb, 64, 1 << 20) ?? src.memoryMb;
  // The service runs code on this machine and holds the tasks' answers: reachable from elsewhere, it needs a token.
  const token = io.env.MLEPIPE_SANDBOX_TOKEN || undefined;
  if (!loopback(a.host) && !token)
    throw new UserError(
      `--host ${a.host}: a sandbox service other machines can reach needs a token: set MLEPIPE_SANDBOX_TOKEN (its clients send the same variable)`,
    );
  const { sandbox, python } = a.on ? await jailsOnHosts(a.on, a, memoryMb, io) : await sandboxFromSettings(a, io);
  const service = await startSandboxService({
    sandbox,
    tasksDir: src.tasksDir,
    reward: src.reward,
    inputs: src.inputs,
    python,
    memoryMb,
    starter: starterScore,
    host: a.host,
    port,
    token,
    log: (l) => io.err(l),
    shaping: src.shaping,
    scaffold: src.scaffold,
  });
  try {
    io.out(`mlepipe sandbox service listening on ${service.url}`);
    await new Promise<void>((done) => (io.signal ? onceAborted(io.signal, done) : undefined));
    return 0;
  } finally {
    await service.close();
    await sandbox.shutdown();
  }
}

/**
 * `--on LABEL`: the service's jails spread over the settings' hosts with that name or label, as a stage's
 * `sandbox: { on: }` places an eval's: code execution grows with the sandbox hosts while the service (HTTP,
 * grading with the answers) stays on this machine. Two warm jails per host are started ahead of need.
 */
async function jailsOnHosts(on: string, a: SandboxServeArgs, memoryMb: number, io: IO) {
  if (a.backend && a.backend !== 'docker')
    throw new UserError(
      `--backend ${a.backend} with --on ${on}: jails on hosts are containers on their Docker engines (leave --backend out)`,
    );
  const settings = await loadSettings(process.cwd(), io.env);
  const where = settings.file ?? 'mlepipe.config.yaml';
  const names = hostsFor(on, settings.hosts);
  if (!names.length) throw new UserError(`--on ${on}: no host named or labelled "${on}" in ${where}`);
  const gpus = integerFlag('--gpus-per-run', a.gpusPerRun, 0, 1024) ?? defaultGpus(on, settings.hosts);
  const cpus = integerFlag('--cpus-per-run', a.cpusPerRun, 1, 1 << 16);
  const most = Math.max(...names.map((n) => gpuCapacity(settings.hosts[n])));
  if (gpus > most)
    throw new UserError(
      `--gpus-per-run ${gpus}: no host matching "${on}" lends that many (most: ${most}, in ${where})`,
    );
  const placed = sandboxPlacement(
    { on, hosts: names, ...(gpus ? { gpusPerRun: gpus } : {}), ...(cpus ? { cpusPerRun: cpus } : {}) },
    settings.hosts,
  );
  const python = defaultPython(settings.python);
  const sandbox = hostSandboxes({
    hosts: placed.sandboxHosts!,
    run: placed.sandboxRun,
    image: settings.sandbox.image,
    python,
    poolSize: 2 * names.length,
    limits: { memoryMb, ...(cpus ? { cpus } : {}) },
    log: (l) => io.err(l),
    ...(settings.sandbox.preload ? { modules: settings.sandbox.preload } : {}),
  });
  return { sandbox, python };
}
