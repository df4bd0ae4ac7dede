// Task nodes shared between test files. Many fixture files build the same generated tasks (the same
// `generate` parameters and seed), their filter, or the same MLToolBench suite, before the stage they are
// about. A cache entry is content-addressed, so an entry another file built under the same key is the
// same bytes: test/run.mjs gives every file one store (MLEPIPE_TEST_SHARED_TASKS), a file that opts in
// (shareTaskNodes()) copies the store's entries into a project's cache before each `mlepipe run`, and
// publishes the task entries that run built. A key the store lacks is built as before; nothing else
// (evals, training) is shared, so what those tests check still runs in them.
import { existsSync } from 'node:fs';
import { cp, mkdir, readdir, readFile, rename, rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { Manifest } from '../pipelines/cache/manifest.js';
import { loadSettings } from '../pipelines/config/settings.js';

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
    for (const m of (await readFile(join(cwd, f), 'utf8').catch(() => '')).matchAll(/\buses:\s*([\w-]+)/g))
      if (KINDS.has(m[1])) used.add(m[1]);
  }
  return [...used];
}

/**
 * Runs `run` (an `mlepipe run` in `cwd`) with the store's entries of the kinds its experiments use copied into
 * the project's cache first, and publishes the task entries it built afterwards. The cache folder is the one
 * mlepipe resolves from the project's settings; the CLI runs without MLEPIPE_CACHE (test/helpers.ts cleanEnv).
 */
export async function withSharedTaskNodes<T>(cwd: string, run: () => Promise<T>): Promise<T> {
  const shared = store(cwd);
  if (!shared) return run();
  const { cacheDir } = await loadSettings(cwd, {});
  const nodes = join(cacheDir, 'nodes');
  await mkdir(nodes, { recursive: true });
  for (const kind of await kindsUsed(cwd)) {
    for (const key of await readdir(join(shared, kind)).catch(() => [] as string[])) {
      if (key.startsWith('.') || existsSync(join(nodes, key))) continue;
      await publish(join(shared, kind, key), join(nodes, key), join(cacheDir, 'tmp'));
    }
  }
  const result = await run();
  for (const key of await readdir(nodes).catch(() => [] as string[])) {
    const kind = await readFile(join(nodes, key, 'manifest.json'), 'utf8').then(
      (t) => (JSON.parse(t) as Pick<Manifest, 'kind'>).kind,
      () => undefined,
    );
    if (kind && KINDS.has(kind) && !existsSync(join(shared, kind, key)))
      await publish(join(nodes, key), join(shared, kind, key), join(shared, kind));
  }
  return result;
}
