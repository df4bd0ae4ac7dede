// A session's workspace when its jail runs on another machine's engine: this
// machine's folder stays the one the scaffold and the grader read, and the
// jail's /workspace follows it, by archives through the engine. Before a step
// the files changed here since the last pull go there (and files deleted here
// are deleted there); after it the jail's workspace comes back whole, and
// files the step deleted are deleted here. public/ is never copied: the jail
// reads its task's files from the host's task store (sandbox/task-store.ts).
import type Docker from 'dockerode';
import { mkdir, mkdtemp, readdir, rm, stat, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative, sep } from 'node:path';
import type { Readable } from 'node:stream';

const NOBODY = 65534;
const tarFs = async () => (await import('tar-fs')).default;

/** Files under `root` (public/ left out) by relative path, with what tells a changed file apart. */
async function stamps(root: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const e of await readdir(root, { withFileTypes: true, recursive: true })) {
    if (!e.isFile()) continue;
    const rel = relative(root, join(e.parentPath, e.name));
    if (isPublic(rel)) continue;
    const st = await stat(join(root, rel));
    out.set(rel, `${st.size}:${st.mtimeMs}`);
  }
  return out;
}

const isPublic = (rel: string) => rel === 'public' || rel.startsWith(`public${sep}`);

/** Puts the workspace's `public` link to the task's folder in the store (owned by root). */
export async function sendPublicLink(c: Docker.Container, target: string): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'mlepipe-link-'));
  try {
    await symlink(target, join(dir, 'public'));
    const pack = (await tarFs()).pack(dir, { entries: ['public'], map: (h) => ({ ...h, uid: 0, gid: 0 }) });
    await c.putArchive(pack as unknown as NodeJS.ReadableStream, { path: '/workspace' });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export class WorkspaceMirror {
  /** The files here as the last pull left them: what the jail holds too. */
  private pulled = new Map<string, string>();

  constructor(private readonly dir: string) {}

  /** Forgets what the jail holds (a fresh jail, or one just reset). */
  clear(): void {
    this.pulled = new Map();
  }

  /**
   * Sends the files changed here since the last pull, owned by the jail's user; `remove` deletes in the
   * jail the files deleted here (the caller knows how to reach the jail's own processes).
   */
  async push(c: Docker.Container, remove: (paths: string[]) => Promise<void>): Promise<void> {
    const now = await stamps(this.dir);
    const gone = [...this.pulled.keys()].filter((p) => !now.has(p));
    if (gone.length) await remove(gone.map((p) => p.split(sep).join('/')));
    const changed = [...now].filter(([p, s]) => this.pulled.get(p) !== s).map(([p]) => p);
    if (!changed.length) return;
    const keep = new Set(changed);
    // Folders travel too (they are cheap), so that a changed file's parents exist there; unchanged files stay.
    const only = (await tarFs()).pack(this.dir, {
      ignore: (name: string) => {
        const rel = relative(this.dir, name);
        return isPublic(rel) || (now.has(rel) && !keep.has(rel));
      },
      map: (h) => ({ ...h, uid: NOBODY, gid: NOBODY }),
    });
    await c.putArchive(only as unknown as NodeJS.ReadableStream, { path: '/workspace' });
  }

  /** Brings the jail's workspace back: its files here, and files it no longer has removed here. */
  async pull(c: Docker.Container): Promise<void> {
    const archive = (await c.getArchive({ path: '/workspace/.' })) as unknown as Readable;
    const tar = await tarFs();
    const seen = new Set<string>();
    const folders = new Set<string>();
    const ignore = (name: string, header?: { type?: string }) => {
      const rel = relative(this.dir, name);
      // Only plain files and folders come back, with plain modes: the link to public/ and anything else stays there.
      const skip = isPublic(rel) || (!!header && header.type !== 'file' && header.type !== 'directory');
      if (!skip && header?.type === 'file') seen.add(rel);
      if (!skip && header?.type === 'directory') folders.add(rel);
      return skip;
    };
    await mkdir(this.dir, { recursive: true });
    await new Promise<void>((ok, fail) => {
      archive
        .pipe(tar.extract(this.dir, { ignore, dmode: 0o755, fmode: 0o644 } as never))
        .on('finish', () => ok())
        .on('error', fail);
      archive.on('error', fail);
    });
    const here = await stamps(this.dir);
    for (const p of here.keys()) if (!seen.has(p)) await rm(join(this.dir, p), { force: true });
    await pruneEmpty(this.dir, seen, folders);
    this.pulled = await stamps(this.dir);
  }
}

/** Removes folders the jail no longer has, once empty (folders it has, or that hold a pulled file, stay). */
async function pruneEmpty(root: string, seen: ReadonlySet<string>, folders: ReadonlySet<string>): Promise<void> {
  const keep = new Set([...folders, ...[...seen].flatMap((p) => ancestors(p))]);
  const dirs = (await readdir(root, { withFileTypes: true, recursive: true }))
    .filter((e) => e.isDirectory())
    .map((e) => relative(root, join(e.parentPath, e.name)))
    .filter((d) => !isPublic(d) && !keep.has(d))
    .sort((a, b) => b.length - a.length);
  for (const d of dirs) {
    const left = await readdir(join(root, d)).catch(() => null);
    if (left && !left.length) await rm(join(root, d), { recursive: true, force: true });
  }
}

const ancestors = (p: string): string[] => {
  const out: string[] = [];
  for (let d = dirname(p); d !== '.' && d !== sep; d = dirname(d)) out.push(d);
  return out;
};
