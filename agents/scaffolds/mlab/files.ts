// Where an mlab file action may reach: the agent's workspace, and the task's
// public/ files for reading. The host does these actions itself (no sandbox
// step), so every path is checked here: absolute paths and ../ are refused,
// and a name that resolves (through a link the agent made) outside both roots
// is refused too, since the host could otherwise read any of its own files.
import { mkdir, readdir, readFile, realpath, stat } from 'node:fs/promises';
import { dirname, isAbsolute, join, normalize, relative, sep } from 'node:path';

/** A refused or failed action: its message is the observation, the episode goes on. */
export class ActionError extends Error {}

export interface Roots {
  workspace: string;
  /** Host folder of public/; when absent, public/ is the (empty) folder in the workspace. */
  publicDir?: string;
}

/** Files the scaffold and tools keep in the workspace for themselves. */
const HIDDEN = new Set(['.steps', '.mlepipe-tools', '.mlab']);

function clean(name: unknown): string {
  if (typeof name !== 'string' || !name.trim()) throw new ActionError('the file name is empty');
  const n = name.trim();
  if (n.includes('\0')) throw new ActionError(`${JSON.stringify(n)}: not a file name`);
  if (isAbsolute(n) || /^[A-Za-z]:[\\/]/.test(n))
    throw new ActionError(`${n}: absolute paths are refused; name files relative to the workspace`);
  const norm = normalize(n).replace(/[\\/]+$/, '') || '.';
  if (norm === '..' || norm.startsWith(`..${sep}`)) throw new ActionError(`${n}: outside the workspace`);
  return norm;
}

const inside = (root: string, p: string) => p === root || p.startsWith(root + sep);

/** The host path of a name to read (a file or folder); public/... reads the task's public files. */
export async function readPath(roots: Roots, name: unknown): Promise<{ path: string; shown: string }> {
  const norm = clean(name);
  const parts = norm.split(sep);
  const pub = parts[0] === 'public' && roots.publicDir;
  const root = pub ? roots.publicDir! : roots.workspace;
  const path = pub ? join(root, ...parts.slice(1)) : join(root, norm);
  const real = await realpath(path).catch(() => null);
  if (real === null) throw new ActionError(`${norm}: no such file or folder`);
  if (!inside(await realpath(root), real)) throw new ActionError(`${norm}: outside the workspace`);
  return { path: real, shown: norm };
}

/** The host path of a file to write; public/ is read-only, and folders are made as needed. */
export async function writePath(roots: Roots, name: unknown): Promise<{ path: string; shown: string }> {
  const norm = clean(name);
  if (norm === '.' || norm.split(sep)[0] === 'public')
    throw new ActionError(`${norm}: public/ is read-only; write your files in the workspace`);
  if (HIDDEN.has(norm.split(sep)[0])) throw new ActionError(`${norm}: reserved for the scaffold`);
  const path = join(roots.workspace, norm);
  const root = await realpath(roots.workspace);
  // The nearest folder that exists must be inside before any folder is made below it (a link could point out).
  let up = dirname(path);
  while (!(await stat(up).catch(() => null))) up = dirname(up);
  if (!inside(root, await realpath(up))) throw new ActionError(`${norm}: outside the workspace`);
  await mkdir(dirname(path), { recursive: true }).catch(() => {
    throw new ActionError(`${norm}: cannot make its folder`);
  });
  // The parent must be a real folder of the workspace; the file itself, if it is a link, must stay inside too.
  if (!inside(root, await realpath(dirname(path)))) throw new ActionError(`${norm}: outside the workspace`);
  const real = await realpath(path).catch(() => null);
  if (real !== null && !inside(root, real)) throw new ActionError(`${norm}: outside the workspace`);
  if (real !== null && (await stat(real)).isDirectory()) throw new ActionError(`${norm}: is a folder`);
  return { path, shown: norm };
}

export async function readText(
  roots: Roots,
  name: unknown,
  maxBytes = 5_000_000,
): Promise<{ text: string; shown: string }> {
  const { path, shown } = await readPath(roots, name);
  const st = await stat(path);
  if (st.isDirectory()) throw new ActionError(`${shown}: is a folder (List Files shows it)`);
  if (st.size > maxBytes)
    throw new ActionError(`${shown}: ${st.size} bytes is too large to read whole; inspect it with a script`);
  const buf = await readFile(path);
  if (buf.includes(0)) throw new ActionError(`${shown}: a binary file`);
  return { text: buf.toString('utf8'), shown };
}

/** MLAgentBench's listing: names, folders with a trailing slash. */
export async function listFiles(roots: Roots, dir: unknown): Promise<string> {
  const { path, shown } = await readPath(roots, dir ?? '.');
  if (!(await stat(path)).isDirectory()) throw new ActionError(`${shown}: not a folder`);
  const entries = await readdir(path, { withFileTypes: true });
  const top = relative(await realpath(roots.workspace), path) === '';
  const names = entries
    .filter((e) => !(top && HIDDEN.has(e.name)))
    .map((e) => (e.isDirectory() || (top && e.name === 'public') ? `${e.name}/` : e.name))
    .sort();
  return names.length ? names.join('\n') : `${shown} is empty`;
}
