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
  /** The command that installs or repairs it; absent when nothing needs doing. */
  fix?: string;
}

export async function inspectEnvs(root?: string): Promise<EnvReport[]> {
  return Promise.all(ENV_NAMES.map((name) => inspectEnv(name, root)));
}

export async function inspectEnv(name: EnvName, root?: string): Promise<EnvReport> {
  const env = pythonEnv(name, root);
  const base = { name, path: env.dir, python: env.python, lock: env.lock };
  if (!existsSync(env.lock)) return { ...base, installed: false, current: false, missing: [], mismatched: [], fix: `restore ${env.lock} (it ships with mlepipe)` };
  const installed = envInstalled(env);
  const current = installed && envCurrent(env);
  let missing: string[] = [];
  let mismatched: string[] = [];
  if (existsSync(env.python)) {
    const r = await execa(env.python, [assetPath('python/envcheck.py'), env.lock, '--json'], { reject: false, timeout: 60_000 });
    try {
      ({ missing, mismatched } = JSON.parse(String(r.stdout).trim().split('\n').pop() ?? '') as { missing: string[]; mismatched: string[] });
    } catch {
      missing = [`(${env.python} does not run: ${String(r.stderr).trim().split('\n').pop() || `exit ${r.exitCode}`})`];
    }
  }
  const ok = installed && current && !missing.length && !mismatched.length;
  return { ...base, installed, current, missing, mismatched, ...(ok ? {} : { fix: env.fix }) };
}

/** One line about an environment for doctor's table. */
export function envDetail(r: EnvReport): string {
  if (!r.installed) return `${r.path}: not installed`;
  const problems = [...(r.current ? [] : ['installed from another lock']), ...(r.missing.length ? [`missing ${r.missing.join(', ')}`] : []), ...(r.mismatched.length ? [`other versions: ${r.mismatched.join(', ')}`] : [])];
  return problems.length ? `${r.path}: ${problems.join('; ')}` : `${r.path} (matches ${r.lock})`;
}
