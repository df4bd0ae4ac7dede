// Which interpreter a jail runs, and what it must see for that. Stages name a
// host interpreter (the agent environment, `python:` from settings, or
// Debian's); a jail holds only /usr of the host, so a virtual environment is
// mounted read-only at a fixed place inside it, and a Docker image carries the
// agent environment baked in at that same place (sandbox/image/build.sh).
// Agents therefore see one layout, and one set of packages, on every backend.
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import { EnvError } from '../core/errors.js';
import { sha256 } from '../core/hash.js';
import { pythonEnv } from '../core/python.js';

/** Where the agent environment is inside every jail and in the sandbox image. */
export const AGENT_IN_JAIL = '/opt/mlepipe/agent';
/** Where another virtual environment (python: in settings) is inside a bwrap jail. */
const VENV_IN_JAIL = '/opt/mlepipe/venv';
/** The label the sandbox image carries: sha256 of the agent lock installed in it. */
export const AGENT_LOCK_LABEL = 'mlepipe.agent-lock';

export interface JailPython {
  /** The interpreter on the host. */
  readonly host: string;
  /** The same interpreter inside the jail. */
  readonly path: string;
  /** Read-only bind mounts [host folder, jail folder] a bwrap jail needs for it. */
  readonly binds: ReadonlyArray<readonly [string, string]>;
  /** For the agent environment: sha256 of its installed lock, which a Docker image must carry too. */
  readonly agentLock?: string;
}

/** The virtual environment an interpreter belongs to (bin/python next to ../pyvenv.cfg), if any. */
function venvOf(python: string): string | undefined {
  const dir = dirname(dirname(python));
  return existsSync(`${dir}/pyvenv.cfg`) ? dir : undefined;
}

function resolvesUnderUsr(python: string): boolean {
  try {
    return realpathSync(python).startsWith('/usr/');
  } catch {
    return false;
  }
}

/**
 * Maps a host interpreter into a jail: one under /usr as it is; a virtual
 * environment over an interpreter under /usr mounted read-only (the agent
 * environment at AGENT_IN_JAIL). Anything else cannot run in a jail, which
 * shows the host's /usr and nothing more of its filesystem.
 */
export function jailPython(host: string, root?: string): JailPython {
  const agent = pythonEnv('agent', root);
  const venv = venvOf(host);
  if (venv && resolvesUnderUsr(host)) {
    const isAgent = venv === agent.dir;
    const inJail = isAgent ? AGENT_IN_JAIL : VENV_IN_JAIL;
    let agentLock: string | undefined;
    if (isAgent) {
      try {
        agentLock = sha256(readFileSync(agent.stamp));
      } catch {
        throw new EnvError(`the agent environment ${agent.dir} is not fully installed; ${agent.fix} installs it`);
      }
    }
    return { host, path: `${inJail}/bin/${basename(host)}`, binds: [[venv, inJail]], agentLock };
  }
  if (host.startsWith('/usr/') && !venv) return { host, path: host, binds: [] };
  throw new EnvError(
    `sandbox jails run an interpreter from the host's /usr, or a virtual environment made from one; ${host} is neither ` +
      `(set python: in mlepipe.config.yaml to such an interpreter, or install the agent environment: ${agent.fix})`,
  );
}

/**
 * The interpreter inside the sandbox image for a host interpreter: the baked
 * agent environment for the agent environment (the image must carry the same
 * lock: checkImage compares its label), the same path for one under /usr
 * (the image has Debian's Python), and nothing else.
 */
export function imagePython(host: string, root?: string): { path: string; agentLock?: string } {
  const venv = venvOf(host);
  if (venv) {
    const inJail = jailPython(host, root);
    if (inJail.agentLock) return { path: inJail.path, agentLock: inJail.agentLock };
    throw new EnvError(
      `the docker sandbox image carries the agent environment only; ${host} belongs to another virtual environment (${venv})`,
    );
  }
  if (host.startsWith('/usr/')) return { path: host };
  throw new EnvError(
    `the docker sandbox runs an interpreter of its image; ${host} is not one (use the agent environment or /usr/bin/python3)`,
  );
}
