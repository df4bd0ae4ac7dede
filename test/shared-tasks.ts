// Task nodes shared between test files. Many fixture files build the same generated tasks (the same
// `generate` parameters and seed), their filter, or the same MLToolBench suite, before the stage they are
// about. A cache entry is content-addressed, so an entry another file built under the same key is the
// same bytes: test/run.mjs gives every file one store (MLEPIPE_TEST_SHARED_TASKS), a file that opts in
// (shareTaskNodes()) copies into a project's cache, before each `mlepipe run`, the store's entries of the task
// nodes that run needs, and publishes the task entries that run built. A key the store lacks is built as
// before; nothing else (evals, training) is shared, so what those tests check still runs in them.
//
// Only the keys the run itself would build are copied, never the rest of the store: what the store holds
// depends on which files ran earlier, and a project's cache must not (its listing, its garbage collection and
// any count of its entries would otherwise change with the order of the files).
import { existsSync } from 'node:fs';
import { cp, mkdir, readFile, rename, rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { Manifest } from '../pipelines/cache/manifest.js';
import { compileGraph } from '../pipelines/compile/graph.js';
import { computeKeys } from '../pipelines/compile/keys.js';
import { loadExperiment } from '../pipelines/config/load.js';

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

/** The `-S` overrides among an `mlepipe run`'s arguments: they may change the keys. */
function overridesOf(args: readonly string[]): string[] {
  const out: string[] = [];
  args.forEach((a, i) => {
    if ((a === '-S' || a === '--set') && args[i + 1] !== undefined) out.push(args[i + 1]);
    else if (a.startsWith('--set=')) out.push(a.slice('--set='.length));
  });
  return out;
}

/**
 * The task nodes (of the shared kinds) that `mlepipe run ARGS` in `cwd` needs, with the project's cache folder,
 * computed as the run computes them. An experiment that does not load or compile needs none: the run then
 * fails on its own, as it would with no store.
 */
async function neededTaskNodes(
  cwd: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv,
): Promise<{ cacheDir: string; nodes: { kind: string; key: string }[] } | undefined> {
  try {
    const exp = await loadExperiment(resolve(cwd, args[1]), { overrides: overridesOf(args.slice(2)), env });
    const graph = await computeKeys(exp, compileGraph(exp));
    const nodes = [...graph.nodes.values()].filter((n) => KINDS.has(n.kind)).map(({ kind, key }) => ({ kind, key }));
    return { cacheDir: exp.settings.cacheDir, nodes };
  } catch {
    return undefined;
  }
}

/**
 * Runs `run` (`mlepipe run ARGS` in `cwd`, with `env`) with the store's entries of the task nodes it needs
 * copied into the project's cache first, and publishes the task entries it built afterwards. The cache folder
 * is the one mlepipe resolves from the project's settings; the CLI runs without MLEPIPE_CACHE (test/helpers.ts
 * cleanEnv).
 */
export async function withSharedTaskNodes<T>(
  cwd: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  run: () => Promise<T>,
): Promise<T> {
  const shared = store(cwd);
  const needed = shared && args[1] !== undefined ? await neededTaskNodes(cwd, args, env) : undefined;
  if (!shared || !needed) return run();
  const nodes = join(needed.cacheDir, 'nodes');
  await mkdir(nodes, { recursive: true });
  for (const { kind, key } of needed.nodes) {
    if (existsSync(join(nodes, key)) || !existsSync(join(shared, kind, key))) continue;
    await publish(join(shared, kind, key), join(nodes, key), join(needed.cacheDir, 'tmp'));
  }
  const result = await run();
  for (const { kind, key } of needed.nodes) {
    if (!existsSync(join(shared, kind, key)) && (await builtKind(join(nodes, key))) === kind)
      await publish(join(nodes, key), join(shared, kind, key), join(shared, kind));
  }
  return result;
}

/** The kind of a finished entry in the cache, from its manifest; undefined while there is none. */
const builtKind = (entry: string) =>
  readFile(join(entry, 'manifest.json'), 'utf8').then(
    (t) => (JSON.parse(t) as Pick<Manifest, 'kind'>).kind,
    () => undefined,
  );
