// Per-item checkpoints of a long node: `<cache>/items/<key>/<hash of id>/`,
// each published by rename so an item is either whole or absent.
import { randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { exists } from '../../core/fs.js';
import { sha256 } from '../../core/hash.js';
import type { ItemStore } from '../../stages/contract.js';

const ID_FILE = '.item-id';

export function itemStore(root: string): ItemStore {
  const dirOf = (id: string) => join(root, sha256(id).slice(0, 32));
  return {
    root,
    async get(id) {
      const dir = dirOf(id);
      return (await exists(join(dir, ID_FILE))) ? dir : undefined;
    },
    async put(id, write) {
      const dir = dirOf(id);
      await mkdir(root, { recursive: true });
      const tmp = `${dir}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
      await mkdir(tmp, { recursive: true });
      try {
        await write(tmp);
        await writeFile(join(tmp, ID_FILE), id);
        await rename(tmp, dir).catch(async (err: NodeJS.ErrnoException) => {
          // Someone finished the same item first: theirs stands.
          if (err.code !== 'ENOTEMPTY' && err.code !== 'EEXIST') throw err;
          await rm(tmp, { recursive: true, force: true });
        });
      } catch (err) {
        await rm(tmp, { recursive: true, force: true });
        throw err;
      }
      return dir;
    },
    async list() {
      const names = await readdir(root).catch(() => [] as string[]);
      const ids: string[] = [];
      for (const n of names) {
        if (n.includes('.tmp-')) continue;
        const id = await readFile(join(root, n, ID_FILE), 'utf8').catch(() => undefined);
        if (id !== undefined) ids.push(id);
      }
      return ids.sort();
    },
  };
}

/**
 * Removes every checkpoint of a node (a run from scratch, `--force`); returns how many finished items went.
 * The caller holds the key's lock, so no attempt is writing items meanwhile.
 */
export async function dropItems(root: string): Promise<number> {
  const finished = (await itemStore(root).list()).length;
  await rm(root, { recursive: true, force: true });
  return finished;
}
