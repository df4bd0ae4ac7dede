// What a node key records of the Python that runs its code: the agent
// environment's lock (its bytes decide every package's version and wheel), or,
// for any other interpreter, that interpreter's path, version and installed
// distributions. Task bytes, grades and agents' results depend on them.
// execa is loaded only when an interpreter is actually probed, not by every command that imports this.
import { readFile, stat } from 'node:fs/promises';
import { packageRoot } from './assets.js';
import { sha256 } from './hash.js';
import { pythonEnv, venvPythonVersion, type PythonChoice } from './python.js';

export type PythonIdentity =
  /** The agent environment: sha256 of the lock it was installed from, and Python's major.minor. */
  | { readonly lock: string; readonly python: string }
  /** Another interpreter: its path, full version and a hash of its `pip freeze` (name==version of every distribution). */
  | { readonly interpreter: string; readonly version: string; readonly packages: string }
  /** One that does not start: the run fails at the node, and the key changes once it is fixed. */
  | { readonly interpreter: string; readonly unavailable: string };

// Reads metadata only (no pip needed): the name==version list pip freeze prints for installed distributions.
const PROBE = [
  'import json, sys',
  'from importlib import metadata',
  'pkgs = sorted({"%s==%s" % (d.metadata["Name"], d.version) for d in metadata.distributions() if d.metadata["Name"]}, key=str.lower)',
  'print(json.dumps({"version": "%d.%d.%d" % sys.version_info[:3], "packages": pkgs}))',
].join('\n');

const probed = new Map<string, Promise<PythonIdentity>>();

export async function pythonIdentity(choice: PythonChoice, root = packageRoot()): Promise<PythonIdentity> {
  if (choice.source === 'agent') {
    const env = pythonEnv('agent', root);
    // The stamp is the lock that is installed, byte for byte; it equals the repository's lock unless that changed since.
    return { lock: sha256(await readFile(env.stamp)), python: venvPythonVersion(env.dir) ?? 'unknown' };
  }
  return interpreterIdentity(choice.path);
}

/** Probed once per process for each interpreter path and modification time. */
export async function interpreterIdentity(path: string): Promise<PythonIdentity> {
  const mtime = (await stat(path).catch(() => undefined))?.mtimeMs ?? '';
  const memo = `${path}\u0000${mtime}`;
  let found = probed.get(memo);
  if (!found) {
    found = probe(path);
    probed.set(memo, found);
  }
  return found;
}

async function probe(path: string): Promise<PythonIdentity> {
  const { execa } = await import('execa');
  const r = await execa(path, ['-c', PROBE], { reject: false, timeout: 60_000, env: { PYTHONDONTWRITEBYTECODE: '1' } });
  if (r.exitCode !== 0) {
    const why =
      r.failed && (r as { code?: string }).code === 'ENOENT'
        ? 'not found'
        : String(r.stderr).trim().split('\n').pop() || `exit ${r.exitCode}`;
    return { interpreter: path, unavailable: why };
  }
  try {
    // The last line: a sitecustomize may print before it.
    const out = JSON.parse(String(r.stdout).trim().split('\n').pop() ?? '') as { version: string; packages: string[] };
    return { interpreter: path, version: out.version, packages: sha256(out.packages.join('\n')) };
  } catch {
    return { interpreter: path, unavailable: 'cannot list its packages' };
  }
}
