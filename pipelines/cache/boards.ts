// Training curves by name: `<cache>/tensorboard/EXPERIMENT/NODE` is a link to the `tensorboard/` folder of
// the node's entry (of its staging folder while it runs), so `tensorboard --logdir <cache>/tensorboard`
// lists runs as EXPERIMENT/NODE[@variant] while entries stay under their keys. A link is a convenience:
// failing to write one never fails a node.
import { randomBytes } from 'node:crypto';
import { mkdir, readdir, readlink, rename, rm, rmdir, stat, symlink } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';
import { TENSORBOARD_DIR } from '../../stages/shared/train-log.js';

export const BOARDS_DIR = 'tensorboard';

/** Where a node's link lies; a `/` in a name (a path in a variant's value) would nest folders. */
export function boardPath(root: string, experiment: string, node: string): string {
  const part = (s: string) => s.replaceAll('/', '%2F');
  return join(root, BOARDS_DIR, part(experiment), part(node));
}

/** Points the node's link at `folder`'s curves (which need not exist yet), replacing any link there. */
export async function linkBoard(root: string, experiment: string, node: string, folder: string): Promise<void> {
  const at = boardPath(root, experiment, node);
  const tmp = `${at}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
  try {
    await mkdir(dirname(at), { recursive: true });
    // Relative, so that a cache moved or mounted elsewhere keeps its links.
    await symlink(relative(dirname(at), join(folder, TENSORBOARD_DIR)), tmp);
    await rename(tmp, at);
  } catch {
    await rm(tmp, { force: true }).catch(() => {});
  }
}

/** Links the node to its finished entry's curves when the entry has some; otherwise it has no link. */
export async function settleBoard(root: string, experiment: string, node: string, entry: string): Promise<void> {
  if (await isDir(join(entry, TENSORBOARD_DIR))) await linkBoard(root, experiment, node, entry);
  else await dropBoard(root, experiment, node, entry);
}

/**
 * Removes the node's link if it points into `folder`, or into a folder that is gone (a staging folder since
 * published or discarded); a link another run points at its own live folder stays.
 */
export async function dropBoard(root: string, experiment: string, node: string, folder: string): Promise<void> {
  const at = boardPath(root, experiment, node);
  const target = await readlink(at).catch(() => undefined);
  if (target === undefined) return;
  const into = dirname(resolve(dirname(at), target));
  if (into !== resolve(folder) && (await isDir(into))) return;
  await rm(at, { force: true }).catch(() => {});
  await rmdir(dirname(at)).catch(() => {});
}

/** Links whose folder (entry or staging folder) is gone (`cache gc`); returns them relative to the cache. */
export async function sweepBoards(root: string, dryRun: boolean): Promise<string[]> {
  const gone: string[] = [];
  const boards = join(root, BOARDS_DIR);
  for (const exp of await readdir(boards).catch(() => [] as string[])) {
    for (const name of await readdir(join(boards, exp)).catch(() => [] as string[])) {
      const at = join(boards, exp, name);
      const target = await readlink(at).catch(() => undefined);
      // A running node's link may point at curves not written yet; its folder is there.
      if (target !== undefined && (await isDir(dirname(resolve(dirname(at), target))))) continue;
      gone.push(relative(root, at));
      if (!dryRun) await rm(at, { force: true });
    }
    if (!dryRun) await rmdir(join(boards, exp)).catch(() => {});
  }
  return gone;
}

const isDir = (p: string) =>
  stat(p).then(
    (s) => s.isDirectory(),
    () => false,
  );
