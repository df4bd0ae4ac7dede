// The project's Python environments (virtual environments under the mlepipe
// package root, each installed from a hash-pinned lock by
// scripts/setup-python.sh) and the choice of interpreter for stages.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { packageRoot } from './assets.js';

export type EnvName = 'agent' | 'trainer' | 'verl' | 'logger';

const ENVS: Record<EnvName, { venv: string; lock: string }> = {
  // Agents' code, task generators and graders.
  agent: { venv: '.venv/agent', lock: 'python/agent.lock' },
  // The trainer worker (CPU torch here; GPU hosts use their image's CUDA build).
  trainer: { venv: '.venv/trainer', lock: 'gpu/worker/requirements.lock' },
  // verl 0.9.1, Ray and vLLM's CPU build: verl exports' checks, CPU runs of verl jobs, and `serve: vllm`.
  verl: { venv: '.venv/verl', lock: 'python/verl.lock' },
  // TensorBoard and W&B writers for grpo and sft nodes' training metrics (stages/train-log.ts).
  logger: { venv: '.venv/logger', lock: 'python/logger.lock' },
};

export const ENV_NAMES = Object.keys(ENVS) as EnvName[];

export interface PythonEnv {
  readonly name: EnvName;
  /** The virtual environment's folder. */
  readonly dir: string;
  /** Its interpreter. */
  readonly python: string;
  readonly lock: string;
  /** A copy of the lock it was installed from, written when the install finished. */
  readonly stamp: string;
  /** The command that installs or repairs it. */
  readonly fix: string;
}

export function pythonEnv(name: EnvName, root = packageRoot()): PythonEnv {
  const dir = join(root, ENVS[name].venv);
  return {
    name,
    dir,
    python: join(dir, 'bin', 'python'),
    lock: join(root, ENVS[name].lock),
    stamp: join(dir, '.installed-lock'),
    fix: `bash ${join(root, 'scripts', 'setup-python.sh')} ${name}`,
  };
}

/** Installed: its interpreter is there and an install finished (one cut short leaves no stamp). */
export function envInstalled(env: PythonEnv): boolean {
  return existsSync(env.python) && existsSync(env.stamp);
}

/** The stamp holds exactly the lock in the repository. */
export function envCurrent(env: PythonEnv): boolean {
  try {
    return readFileSync(env.stamp).equals(readFileSync(env.lock));
  } catch {
    return false;
  }
}

/** Major.minor of a virtual environment's interpreter, from its pyvenv.cfg (nothing is run). */
export function venvPythonVersion(dir: string): string | undefined {
  try {
    const m = /^version(?:_info)?\s*=\s*(\d+)\.(\d+)/m.exec(readFileSync(join(dir, 'pyvenv.cfg'), 'utf8'));
    return m ? `${m[1]}.${m[2]}` : undefined;
  } catch {
    return undefined;
  }
}

export interface PythonChoice {
  readonly path: string;
  /** settings: `python:` in the project settings; agent: the agent environment; system: the fallback. */
  readonly source: 'settings' | 'agent' | 'system';
  /** One line for run logs and doctor when the fallback was taken. */
  readonly note?: string;
}

/**
 * The interpreter stages hand to graders, evaluators and the process sandbox:
 * `python:` from settings, else the agent environment when it is installed,
 * else Debian's /usr/bin/python3 (where apt puts numpy/pandas/sklearn; a
 * `python3` earlier on PATH may be another interpreter without them).
 * Nothing is run here; `mlepipe doctor` does the thorough check.
 */
export function choosePython(configured?: string, root = packageRoot()): PythonChoice {
  if (configured) return { path: configured, source: 'settings' };
  const env = pythonEnv('agent', root);
  if (envInstalled(env)) return { path: env.python, source: 'agent' };
  const path = existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3';
  return {
    path,
    source: 'system',
    note: `python: ${path} (the agent environment ${env.dir} is not installed; ${env.fix} installs it)`,
  };
}

export function defaultPython(configured?: string): string {
  return choosePython(configured).path;
}
