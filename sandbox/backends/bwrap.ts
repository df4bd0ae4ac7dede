// `bwrap`: bubblewrap jails. Every namespace unshared (no network, own PIDs,
// an unprivileged user with no capabilities), a read-only view of only the
// system files Python needs, the task's public/ read-only at
// /workspace/public, the workspace read-write at /workspace, a private /tmp.
// The task folder itself, private/, the project, the cache and home
// directories are simply not in the jail's filesystem.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { jailPython, type JailPython } from '../interpreter.js';
import { JAIL_PATH, jailEnv } from '../output.js';
import { launcherArgv, spawnJailed, type Command } from '../spawn.js';
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
  for (const f of ['/etc/alternatives', '/etc/ld.so.cache', '/etc/localtime'])
    if (existsSync(f)) args.push('--ro-bind', f, f);
  return args;
}

/**
 * The bwrap command for a jail over `workspace` and `pub`, running `argv`. bwrap's options travel through
 * fd 3 (the command itself must stay on its command line, and names no host folder), and bwrap starts with
 * a neutral environment in /: the jail's PID 1 is a fork of bwrap, so its /proc/1/cmdline and
 * /proc/1/environ would otherwise show the host's folders and PATH.
 */
export function bwrapCommand(
  workspace: string,
  pub: string,
  limits: Limits,
  argv: string[],
  python?: JailPython,
): Command {
  const env = jailEnv(limits.cpus, '/workspace');
  const args = [
    '--unshare-all',
    '--unshare-user',
    '--uid',
    NOBODY,
    '--gid',
    NOBODY,
    '--die-with-parent',
    '--new-session',
    '--cap-drop',
    'ALL',
    '--disable-userns',
    ...systemBinds(),
    // The interpreter's virtual environment (the agent environment), read-only like /usr.
    ...(python?.binds ?? []).flatMap(([from, to]) => ['--ro-bind', from, to]),
    '--proc',
    '/proc',
    '--dev',
    '/dev',
    '--size',
    String(Math.min(limits.maxWorkspaceMb, 1024) * 1024 * 1024),
    '--tmpfs',
    '/tmp',
    '--bind',
    workspace,
    '/workspace',
    '--ro-bind',
    pub,
    '/workspace/public',
    // The jail's own root is a tmpfs; read-only, so /etc, / and the rest cannot be written either.
    '--remount-ro',
    '/',
    '--chdir',
    '/workspace',
    '--clearenv',
    ...Object.entries(env).flatMap(([k, v]) => ['--setenv', k, v]),
  ];
  return { argv: [bwrapPath(), '--args', '3', '--', ...argv], fd3: Buffer.from(args.map((a) => `${a}\0`).join('')) };
}

/** What bwrap itself is started with: nothing of the host's environment, and / as its folder. */
export const BWRAP_SPAWN = { env: { PATH: JAIL_PATH }, cwd: '/' };

let found: string | undefined;
/** bwrap's absolute path, looked up once on the host's PATH (bwrap runs with the jail's PATH). */
function bwrapPath(): string {
  found ??=
    (process.env.PATH ?? '/usr/bin:/bin')
      .split(':')
      .map((d) => join(d || '.', 'bwrap'))
      .find((f) => existsSync(f)) ?? 'bwrap';
  return found;
}

/** `python` is the host interpreter (sandbox/interpreter.ts maps it into the jail). */
export function bwrapBackend(host = '/usr/bin/python3'): Backend {
  const python = jailPython(host);
  return {
    name: 'bwrap',
    open: (opts: SessionOptions): Promise<Session> =>
      coldSession('bwrap', opts, (step, limits, { workspace, pub }) =>
        spawnJailed({ ...BWRAP_SPAWN, limits, backend: 'bwrap', workspace, signal: opts.signal }, (cg) =>
          bwrapCommand(workspace, pub, limits, launcherArgv(python.path, limits, cg, '/workspace', step), python),
        ),
      ),
  };
}
