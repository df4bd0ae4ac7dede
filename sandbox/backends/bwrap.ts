// `bwrap`: bubblewrap jails. Every namespace unshared (no network, own PIDs,
// an unprivileged user with no capabilities), a read-only view of only the
// system files Python needs, the task's public/ read-only at
// /workspace/public, the workspace read-write at /workspace, a private /tmp.
// The task folder itself, private/, the project, the cache and home
// directories are simply not in the jail's filesystem.
import { existsSync } from 'node:fs';
import { EnvError } from '../../core/errors.js';
import { jailEnv } from '../output.js';
import { launcherArgv, spawnJailed } from '../spawn.js';
import type { Backend, Limits, Session, SessionOptions } from '../types.js';
import { coldSession } from '../workspace.js';

const NOBODY = '65534';

/** Read-only system paths a Python with numpy/pandas/sklearn needs (merged-/usr Debian layout). */
function systemBinds(): string[] {
  const args = ['--ro-bind', '/usr', '/usr'];
  for (const [link, target] of [
    ['/bin', 'usr/bin'],
    ['/lib', 'usr/lib'],
    ['/lib64', 'usr/lib64'],
    ['/sbin', 'usr/sbin'],
  ]) {
    if (existsSync(link)) args.push('--symlink', target, link);
  }
  // BLAS/LAPACK are chosen through /etc/alternatives; the loader cache speeds up library lookup.
  for (const f of ['/etc/alternatives', '/etc/ld.so.cache', '/etc/localtime']) if (existsSync(f)) args.push('--ro-bind', f, f);
  return args;
}

/** bwrap arguments for a jail over `workspace` and `pub`, running `argv`. */
export function bwrapArgv(workspace: string, pub: string, limits: Limits, argv: string[], extra: string[] = []): string[] {
  const env = jailEnv(limits.cpus, '/workspace');
  return [
    'bwrap',
    '--unshare-all',
    '--unshare-user',
    '--uid', NOBODY,
    '--gid', NOBODY,
    '--die-with-parent',
    '--new-session',
    '--cap-drop', 'ALL',
    '--disable-userns',
    ...systemBinds(),
    '--proc', '/proc',
    '--dev', '/dev',
    '--size', String(Math.min(limits.maxWorkspaceMb, 1024) * 1024 * 1024),
    '--tmpfs', '/tmp',
    '--bind', workspace, '/workspace',
    '--ro-bind', pub, '/workspace/public',
    ...extra,
    // The jail's own root is a tmpfs; read-only, so /etc, / and the rest cannot be written either.
    '--remount-ro', '/',
    '--chdir', '/workspace',
    '--clearenv',
    ...Object.entries(env).flatMap(([k, v]) => ['--setenv', k, v]),
    ...argv,
  ];
}

export function bwrapBackend(python = '/usr/bin/python3'): Backend {
  if (!python.startsWith('/usr/')) {
    throw new EnvError(`the bwrap sandbox runs the interpreter from the host's /usr; ${python} is outside it (use Debian's /usr/bin/python3)`);
  }
  return {
    name: 'bwrap',
    open: (opts: SessionOptions): Promise<Session> =>
      coldSession('bwrap', opts, (step, limits, { workspace, pub }) =>
        spawnJailed({ env: { PATH: process.env.PATH ?? '/usr/bin:/bin' }, limits, backend: 'bwrap', workspace }, (cg) =>
          bwrapArgv(workspace, pub, limits, launcherArgv(python, limits, cg, '/workspace', step)),
        ),
      ),
  };
}
