// Paths typed by users that must stay inside a folder (a shell stage's outs
// and deps inside the experiment's folder, an output inside the node's cache
// entry). Checked on the text at validation and again at the moment of
// writing, where a symlink on the way could lead somewhere else.
import { lstat, readlink, realpath } from 'node:fs/promises';
import { dirname, isAbsolute, normalize, relative, resolve, sep } from 'node:path';

export type PathProblem = 'absolute' | 'outside' | 'itself';

/** Why `rel` cannot name a place strictly inside its folder, judged on the text alone; undefined when it can. */
export function pathProblem(rel: string): PathProblem | undefined {
  if (isAbsolute(rel)) return 'absolute';
  const n = normalize(rel === '' ? '.' : rel).replace(/[/\\]+$/, '');
  if (n === '.' || n === '') return 'itself';
  if (n === '..' || n.startsWith('../')) return 'outside';
  return undefined;
}

/** A path that would land outside its folder; the message says which and why. */
export class OutsideError extends Error {
  constructor(
    readonly path: string,
    message: string,
  ) {
    super(message);
    this.name = 'OutsideError';
  }
}

/**
 * `rel` resolved under `root`, refused (OutsideError) when its text leaves
 * the root or when the part of it that exists resolves, through symlinks,
 * outside the root's own real location: what a write there would follow.
 */
export async function resolveInside(root: string, rel: string): Promise<string> {
  const problem = pathProblem(rel);
  if (problem) throw new OutsideError(rel, `${rel} ${PROBLEM_TEXT[problem]}`);
  const full = resolve(root, rel);
  const realRoot = await realpath(root);
  const real = await realExisting(full);
  const r = relative(realRoot, real);
  if (r === '' || r === '..' || r.startsWith(`..${sep}`) || isAbsolute(r)) {
    throw new OutsideError(rel, `${rel} leads to ${real} through a symbolic link`);
  }
  return full;
}

const PROBLEM_TEXT: Record<PathProblem, string> = {
  absolute: 'is an absolute path',
  outside: 'climbs out of its folder',
  itself: 'names the folder itself',
};

// Where a write to `p` would land: the real path of the longest part of it
// that exists, with the rest appended; a dangling symlink counts as its target.
async function realExisting(p: string, hops = 0): Promise<string> {
  try {
    return await realpath(p);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    const link = await lstat(p).then(
      (st) => st.isSymbolicLink(),
      () => false,
    );
    if (link && hops < 40) return realExisting(resolve(dirname(p), await readlink(p)), hops + 1);
    const parent = dirname(p);
    if (parent === p) return p;
    return resolve(await realExisting(parent, hops), relative(parent, p));
  }
}
