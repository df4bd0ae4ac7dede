// Task files kept where they already are. MLE-bench's prepared data runs to
// gigabytes and MLE-bench writes it once, so an mlebench task links to it
// instead of holding a copy: `public` and `private/answers` are symlinks to the
// prepared folders. What stands for the bytes is each file's name, size and
// modification time, recorded in task.json when the task is made (the node's
// key is built from the same listing) and checked again whenever the task is
// used, so data changed behind the cache's back is refused, not graded.
import { readdir, realpath, stat, symlink } from 'node:fs/promises';
import { join, relative } from 'node:path';

/** [path under the folder, size in bytes, mtime in whole ms], sorted by path. */
export type Listing = Array<[string, number, number]>;

export interface Reference {
  /** The folder linked to, absolute and without links. */
  target: string;
  files: Listing;
}

/** Every regular file under `dir` by name, size and time, without reading any. */
export async function listing(dir: string): Promise<Listing> {
  const out: Listing = [];
  for (const e of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (!e.isFile()) continue;
    const full = join(e.parentPath ?? (e as { path: string }).path, e.name);
    const st = await stat(full);
    out.push([relative(dir, full).split('\\').join('/'), st.size, Math.round(st.mtimeMs)]);
  }
  return out.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
}

/** Links `dest/rel` to `source` and returns what identifies it. */
export async function linkFolder(source: string, dest: string, rel: string): Promise<Reference> {
  const target = await realpath(source);
  await symlink(target, join(dest, rel), 'dir');
  return { target, files: await listing(target) };
}

/** What differs between a recorded reference and its folder now, in words, or undefined when it is as recorded. */
export async function referenceChange(ref: Reference): Promise<string | undefined> {
  const now = await listing(ref.target).catch(() => undefined);
  if (!now) return `${ref.target} is gone`;
  const before = new Map(ref.files.map(([p, size, mtime]) => [p, { size, mtime }]));
  for (const [p, size, mtime] of now) {
    const was = before.get(p);
    if (!was) return `${p} was added`;
    if (was.size !== size) return `${p} changed size (${was.size} → ${size} bytes)`;
    if (was.mtime !== mtime) return `${p} was modified (${new Date(was.mtime).toISOString()} → ${new Date(mtime).toISOString()})`;
    before.delete(p);
  }
  const gone = [...before.keys()][0];
  return gone === undefined ? undefined : `${gone} was removed`;
}
