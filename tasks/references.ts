// Task files kept where they already are. MLE-bench's prepared data runs to
// gigabytes and MLE-bench writes it once, so an mlebench task links to it
// instead of holding a copy: `public` and `private/answers` are symlinks to the
// prepared folders. What stands for the bytes is each file's name, size and
// modification time, recorded in task.json when the task is made (the node's
// key is built from the same listing) and checked again whenever the task is
// used, so data changed behind the cache's back is refused, not graded.
import { realpath, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { statListing, type Listing } from '../core/fs.js';

export interface Reference {
  /** The folder linked to, absolute and without links. */
  target: string;
  files: Listing;
}

/** Links `dest/rel` to `source` and returns what identifies it. */
export async function linkFolder(source: string, dest: string, rel: string): Promise<Reference> {
  const target = await realpath(source);
  await symlink(target, join(dest, rel), 'dir');
  return { target, files: await statListing(target) };
}

/** What differs between a recorded reference and its folder now, in words, or undefined when it is as recorded. */
export async function referenceChange(ref: Reference): Promise<string | undefined> {
  const now = await statListing(ref.target).catch(() => undefined);
  if (!now) return `${ref.target} is gone`;
  const before = new Map(ref.files.map(([p, size, mtime]) => [p, { size, mtime }]));
  for (const [p, size, mtime] of now) {
    const was = before.get(p);
    if (!was) return `${p} was added`;
    if (was.size !== size) return `${p} changed size (${was.size} → ${size} bytes)`;
    if (was.mtime !== mtime)
      return `${p} was modified (${new Date(was.mtime).toISOString()} → ${new Date(mtime).toISOString()})`;
    before.delete(p);
  }
  const gone = [...before.keys()][0];
  return gone === undefined ? undefined : `${gone} was removed`;
}
