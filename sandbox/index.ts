// Picks and builds a sandbox backend from settings: cold bwrap (default on
// Linux), docker, or process (only when named), each optionally served by
// warm executors.
import type Docker from 'dockerode';
import { EnvError } from '../core/errors.js';
import { bwrapBackend } from './backends/bwrap.js';
import { dockerBackend } from './backends/docker.js';
import { dockerJails } from './backends/docker-jails.js';
import { DEFAULT_IMAGE } from './containers.js';
import { imagePython, jailPython } from './interpreter.js';
import type { GpuLender } from './gpus.js';
import { taskStore } from './task-store.js';
import { processBackend } from './backends/process.js';
import { DEFAULT_LIMITS, type Backend, type BackendName, type Limits, type SessionOptions } from './types.js';
import { bwrapJails, type JailLauncher } from './warm/jail.js';
import { WarmPool } from './warm/pool.js';

export interface SandboxConfig {
  backend: BackendName;
  /** The host interpreter stages chose (default Debian's /usr/bin/python3): run as it is by the process
   * backend, mounted into bwrap jails, its counterpart in the image under docker (sandbox/interpreter.ts). */
  python?: string;
  image?: string;
  /** Serve sessions from warm executors (bwrap and docker). */
  warm?: boolean;
  poolSize?: number;
  /** Modules warm executors import before forking steps (default DEFAULT_WARM_MODULES; missing ones are skipped). */
  modules?: readonly string[];
  limits?: Partial<Limits>;
  gpus?: number | 'all';
  /** docker: GPUs per session from a host's share, instead of `gpus` (sandbox/gpus.ts). */
  lender?: GpuLender;
  /** The process backend runs only when it was chosen by name (settings or --backend). */
  explicit?: boolean;
  warn?: (message: string) => void;
  /** Aborting it closes the warm pool's spare jails at once (sessions stop their steps by their own signal). */
  signal?: AbortSignal;
  /** docker: another machine's engine, its address for messages, and the host it is (whose failures may move a run). */
  engine?: { client: () => Promise<Docker>; where: string; host?: string };
}

export interface Sandbox extends Backend {
  shutdown(): Promise<void>;
  /**
   * Warm jails started so far, those taken over from an earlier stage of the run (sandbox/warm/shelf.ts), and
   * sessions served by a reused one (zeros without warm executors).
   */
  jails(): { started: number; handed: number; reused: number };
}

export function createSandbox(cfg: SandboxConfig): Sandbox {
  const warn = cfg.warn ?? ((m: string) => process.stderr.write(`mlepipe: warning: ${m}\n`));
  const python = cfg.python ?? '/usr/bin/python3';
  let cold: Backend;
  // Cold sessions get the sandbox's limits under their own, as warm jails do (a stage's memory and CPUs per run).
  const withBase = (o: SessionOptions): SessionOptions => ({ ...o, limits: { ...cfg.limits, ...o.limits } });
  // Another machine's engine: the workspace travels by archives, the task's files by that engine's store.
  const docker = {
    image: cfg.image,
    python,
    gpus: cfg.gpus,
    lender: cfg.lender,
    ...(cfg.engine ? { docker: cfg.engine.client, remote: true, where: cfg.engine.where, host: cfg.engine.host } : {}),
  };
  const store = cfg.engine
    ? taskStore(cfg.engine.client, cfg.image ?? DEFAULT_IMAGE, imagePython(python).path, cfg.engine.where)
    : undefined;
  if (cfg.backend === 'process') {
    if (!cfg.explicit)
      throw new EnvError(
        'the process sandbox runs agent code without any isolation; choose it by name (sandbox.backend: process, or --backend process)',
      );
    warn('sandbox backend "process": agent code runs WITHOUT isolation (it can read private/ answers and the network)');
    cold = processBackend(python);
  } else if (cfg.backend === 'docker') {
    cold = dockerBackend(docker, store);
  } else {
    cold = bwrapBackend(python);
  }
  if (!cfg.warm || cfg.backend === 'process') {
    if (cfg.warm) warn('warm executors need bwrap or docker; the process backend starts every step cold');
    return {
      name: cold.name,
      open: (o) => cold.open(withBase(o)),
      shutdown: async () => {},
      jails: () => ({ started: 0, handed: 0, reused: 0 }),
    };
  }
  // Warm servers are started with the interpreter's path inside the jail.
  let launcher: JailLauncher;
  let inJail: string;
  if (cfg.backend === 'docker') {
    launcher = dockerJails(docker, store);
    inJail = imagePython(python).path;
  } else {
    const jp = jailPython(python);
    launcher = bwrapJails(jp);
    inJail = jp.path;
  }
  // MLEPIPE_JAIL_REUSE=0 gives every session a fresh jail (to measure what reuse saves).
  const pool = new WarmPool({
    launcher,
    python: inJail,
    reuse: process.env.MLEPIPE_JAIL_REUSE !== '0',
    modules: cfg.modules,
    size: cfg.poolSize,
    limits: cfg.limits,
    fallback: { name: cold.name, open: (o) => cold.open(withBase(o)) },
    warn,
    signal: cfg.signal,
    // Jails in bwrap pass from stage to stage of a run when they would be started alike. Containers do not: on
    // another machine's engine they are the host's, and a run must not hold them past its stage.
    shelf:
      cfg.backend === 'bwrap' ? JSON.stringify(['bwrap', python, { ...DEFAULT_LIMITS, ...cfg.limits }]) : undefined,
  });
  pool.fill();
  return {
    name: pool.name,
    open: (o) => pool.open(o),
    shutdown: () => pool.shutdown(),
    jails: () => ({ started: pool.started, handed: pool.handed, reused: pool.reused }),
  };
}

export type { Backend, BackendName, Limits, Session, Step, StepResult } from './types.js';
export { DEFAULT_LIMITS } from './types.js';
