// Task nodes shared between test files. Many fixture files build the same generated tasks (the same
// `generate` parameters and seed), their filter, or the same MLToolBench suite, before the stage they are
// about. A cache entry is content-addressed, so an entry another file built under the same key is the
// same bytes: test/run.mjs gives every file one store (MLEPIPE_TEST_SHARED_TASKS), a file that opts in
// (shareTaskNodes()) copies the store's entries into a project's cache before each `mlepipe run`, and
// publishes the task entries that run built. A key the store lacks is built as before; nothing else
// (evals, training) is shared, so what those tests check still runs in them.
import { existsSync } from 'node:fs';
import { cp, mkdir, readdir, readFile, rename, rm } from 'node:fs/promises';
import { isAbsolute, join, resolve } from 'node:path';

/** The stage kinds whose entries are shared: they make tasks, and their output depends only on their key. */
const KINDS = new Set(['generate', 'filter', 'mltoolbench']);

let enabled = false;

/** Makes this file's `mlepipe run` calls (test/helpers.ts cli()) take and give shared task entries. */
export function shareTaskNodes(): void {
  enabled = true;
}

const own = new Set<string>();

/** Leaves the project in `dir` out of the sharing: a test that needs a cache no other file filled. */
export function ownTaskNodes(dir: string): void {
  own.add(resolve(dir));
}

const store = (cwd: string) => (enabled && !own.has(resolve(cwd)) ? process.env.MLEPIPE_TEST_SHARED_TASKS : undefined);

/** The cache folder of the project in `cwd`, from its mlepipe.config.yaml (`.mlepipe` when it names none). */
async function cacheOf(cwd: string): Promise<string> {
  const settings = await readFile(join(cwd, 'mlepipe.config.yaml'), 'utf8').catch(() => '');
  const named = /^cache:\s*(\S+)\s*$/m.exec(settings)?.[1];
  return named ? (isAbsolute(named) ? named : resolve(cwd, named)) : join(cwd, '.mlepipe');
}

const fresh = (dir: string) => join(dir, `.shared-${process.pid}-${Math.random().toString(36).slice(2)}`);

/**
 * Copies `from` to `to` as the cache publishes an entry: into a fresh folder beside it, then renamed into
 * place, so that a reader never sees half of one. Modification times are kept, so that the cache, which
 * checks an entry by size and time, need not hash its files again. Another file publishing the same key first
 * is fine: its entry is the same.
 */
async function publish(from: string, to: string, staging: string): Promise<void> {
  await mkdir(staging, { recursive: true });
  const tmp = fresh(staging);
  await cp(from, tmp, { recursive: true, preserveTimestamps: true });
  await rename(tmp, to).catch(() => rm(tmp, { recursive: true, force: true }));
}

/**
 * The shared kinds the experiment files in `cwd` use. The store keeps each kind's entries apart, so that a
 * project takes only those it may need: an MLToolBench suite's entry is tens of megabytes, and a project of
 * generated tasks has no use for it.
 */
async function kindsUsed(cwd: string): Promise<string[]> {
  const used = new Set<string>();
  for (const f of (await readdir(cwd).catch(() => [] as string[])).filter((n) => /\.ya?ml$/.test(n))) {
    for (const m of (await readFile(join(cwd, f), 'utf8').catch(() => '')).matchAll(/\buses:\s*([\w-]+)/g)) if (KINDS.has(m[1])) used.add(m[1]);
  }
  return [...used];
}

/** Before a run in `cwd`: the store's entries of the kinds its experiments use that its cache lacks. */
export async function takeTaskNodes(cwd: string): Promise<void> {
  const from = store(cwd);
  if (!from) return;
  const cache = await cacheOf(cwd);
  await mkdir(join(cache, 'nodes'), { recursive: true });
  for (const kind of await kindsUsed(cwd)) {
    for (const key of await readdir(join(from, kind)).catch(() => [] as string[])) {
      if (key.startsWith('.') || existsSync(join(cache, 'nodes', key))) continue;
      await publish(join(from, kind, key), join(cache, 'nodes', key), join(cache, 'tmp'));
    }
  }
}

/** After a run in `cwd`: its task entries that the store lacks. */
export async function giveTaskNodes(cwd: string): Promise<void> {
  const to = store(cwd);
  if (!to) return;
  const nodes = join(await cacheOf(cwd), 'nodes');
  for (const key of await readdir(nodes).catch(() => [] as string[])) {
    const kind = await readFile(join(nodes, key, 'manifest.json'), 'utf8').then(
      (t) => (JSON.parse(t) as { kind?: string }).kind,
      () => undefined,
    );
    if (kind && KINDS.has(kind) && !existsSync(join(to, kind, key))) await publish(join(nodes, key), join(to, kind, key), join(to, kind));
  }
}
