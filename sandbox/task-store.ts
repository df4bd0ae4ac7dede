// Task data on a host's engine: each task's public/ files once, in one
// volume per engine, under the hash of their content. Every jail on that
// engine mounts the volume read-only and finds its task's files through a
// `public` link in its workspace, so a task's data cross the network once per
// host however many runs use it, and no run can change them for another.
// private/ never goes there: grading stays on this machine.
import type Docker from 'dockerode';
import { randomBytes } from 'node:crypto';
import { readdir, stat } from 'node:fs/promises';
import { join, relative } from 'node:path';
import type { Readable } from 'node:stream';
import { EnvError } from '../core/errors.js';
import { canonicalJson, hashFile, sha256 } from '../core/hash.js';
import { createContainer } from './containers.js';

/** The volume holding the tasks' public files on each engine, and where jails see it. */
export const TASK_VOLUME = 'mlepipe-tasks';
export const TASKS_IN_JAIL = '/mlepipe-tasks';

/** The store's mount in a jail: read-only, so that no run changes what the next one reads. */
export const taskMount = (): Docker.MountSettings => ({
  Type: 'volume',
  Source: TASK_VOLUME,
  Target: TASKS_IN_JAIL,
  ReadOnly: true,
});

async function files(root: string): Promise<Array<{ path: string; size: number; mtimeMs: number }>> {
  const out = [];
  for (const e of await readdir(root, { withFileTypes: true, recursive: true })) {
    if (!e.isFile()) continue;
    const full = join(e.parentPath, e.name);
    const st = await stat(full);
    out.push({ path: relative(root, full), size: st.size, mtimeMs: st.mtimeMs });
  }
  return out.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

// Hashing a competition's data costs seconds per gigabyte: once per folder and listing in this process.
const hashes = new Map<string, { stamp: string; hash: Promise<string> }>();

/** The hash of a folder's files (their paths and contents). */
export async function contentHash(dir: string): Promise<string> {
  const listing = await files(dir);
  const stamp = canonicalJson(listing);
  const known = hashes.get(dir);
  if (known?.stamp === stamp) return known.hash;
  const hash = (async () =>
    sha256(
      canonicalJson(await Promise.all(listing.map(async (f) => [f.path, f.size, await hashFile(join(dir, f.path))]))),
    ))();
  hashes.set(dir, { stamp, hash });
  return hash;
}

const tarFs = async () => (await import('tar-fs')).default;

// Runs in a helper container as root: the filled folder takes its final name in one rename, so a jail
// never sees half a task; a second filler that lost the race finds the name taken and removes its copy.
// The mark beside the folder says it is complete (it is what a later run looks for).
const RENAME = `import os, shutil, sys
tmp, final = sys.argv[1], sys.argv[2]
try:
    os.rename(tmp, final)
except OSError:
    shutil.rmtree(tmp, ignore_errors=True)
    if not os.path.isdir(final):
        sys.exit(1)
open(final + ".ok", "w").close()
`;

/** True when the store holds the mark of a complete folder (read through the archive API, which the helper allows). */
async function present(c: Docker.Container, mark: string): Promise<boolean> {
  try {
    const archive = (await c.getArchive({ path: mark })) as unknown as Readable;
    // Read to its end, so that the connection is released.
    for await (const chunk of archive) void chunk;
    return true;
  } catch {
    return false;
  }
}

/** One engine's store. `python` is the image's interpreter, which the helper container runs. */
export function taskStore(engine: () => Promise<Docker>, image: string, python: string, where: string) {
  const filled = new Map<string, Promise<void>>();
  const fill = async (pub: string, hash: string): Promise<void> => {
    const docker = await engine();
    const tmp = `/store/.${hash}.${randomBytes(4).toString('hex')}`;
    const c = await createContainer(
      docker,
      {
        Image: image,
        Cmd: [python, '-c', RENAME, tmp, `/store/${hash}`],
        User: '0:0',
        NetworkDisabled: true,
        HostConfig: {
          NetworkMode: 'none',
          ReadonlyRootfs: true,
          CapDrop: ['ALL'],
          CapAdd: ['DAC_OVERRIDE', 'FOWNER'],
          Mounts: [{ Type: 'volume', Source: TASK_VOLUME, Target: '/store' }],
        },
      },
      { reap: false },
    ).catch((err: Error) => {
      throw new EnvError(
        `${where}: could not create the container that stores task data: ${err.message.split('\n')[0]}`,
      );
    });
    try {
      if (await present(c.raw, `/store/${hash}.ok`)) return;
      const tar = await tarFs();
      // Owned by root and read-only: the jails' user (nobody) reads them and can change nothing.
      const pack = tar.pack(pub, {
        map: (h) => ({
          ...h,
          name: `${tmp.slice('/store/'.length)}/${h.name}`,
          uid: 0,
          gid: 0,
          mode: h.type === 'directory' ? 0o555 : 0o444,
        }),
      });
      await c.raw.putArchive(pack as unknown as NodeJS.ReadableStream, { path: '/store' });
      await c.start();
      const code = await c.wait();
      if (code !== 0) throw new EnvError(`${where}: storing the task's data failed (exit ${code})`);
    } finally {
      await c.remove();
    }
  };
  return {
    /** Puts the task's public files on the engine unless they are there; answers where jails see them. */
    async ensure(pub: string): Promise<string> {
      const hash = await contentHash(pub);
      let p = filled.get(hash);
      if (!p) {
        p = fill(pub, hash);
        filled.set(hash, p);
        // A failed fill is tried again by the next session rather than remembered.
        p.catch(() => filled.delete(hash));
      }
      await p;
      return `${TASKS_IN_JAIL}/${hash}`;
    },
  };
}

export type TaskStore = ReturnType<typeof taskStore>;
