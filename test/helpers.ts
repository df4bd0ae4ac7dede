// Shared by fixture and end-to-end tests: temp projects and the built CLI.
import { execa, type ResultPromise } from 'execa';
import { existsSync } from 'node:fs';
import { cp, mkdir, mkdtemp, readdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Manifest } from '../pipelines/cache/manifest.js';
import { withSharedTaskNodes } from './shared-tasks.js';
import { timeScale } from './time-scale.mjs';

export { ownTaskNodes, shareTaskNodes } from './shared-tasks.js';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const CLI = join(ROOT, 'dist', 'cli.js');

/** A temp project: mlepipe.config.yaml (cache inside it) plus the given files. */
export async function tmpProject(files: Record<string, string>, settings = 'cache: .mlepipe\n'): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'mlepipe-test-'));
  await writeFile(join(dir, 'mlepipe.config.yaml'), settings);
  for (const [name, text] of Object.entries(files)) {
    await mkdir(dirname(join(dir, name)), { recursive: true });
    await writeFile(join(dir, name), text);
  }
  return dir;
}

/** The factor test/run.mjs chose for this run (see test/time-scale.mjs). */
export const TIME_SCALE = timeScale();

/**
 * A wall-clock limit stretched by TIME_SCALE. Only for limits that guard against a hang or that are the
 * behaviour under test (a step's timeout plus its allowed overshoot); never to check that something is fast.
 */
export const scaled = (ms: number) => Math.round(ms * TIME_SCALE);

/** How long one CLI call may take before it is killed as hung. */
const CLI_LIMIT_MS = scaled(300_000);

export interface CliResult {
  exitCode: number;
  stdout: string;
  stderr: string;
}

const cleanEnv = (env: Record<string, string> = {}) => {
  const e: Record<string, string | undefined> = { ...process.env, CI: 'true', NO_COLOR: '1', ...env };
  delete e.MLEPIPE_CACHE;
  return e;
};

/** Runs the built CLI to completion (the one in `root`, a package copy, when given). */
export async function cli(
  args: string[],
  opts: { cwd: string; env?: Record<string, string>; root?: string; limitMs?: number },
): Promise<CliResult> {
  const bin = opts.root ? join(opts.root, 'dist', 'cli.js') : CLI;
  // A run whose work is minutes long by design (a whole training chain) names its own limit, scaled as the rest.
  const timeout = opts.limitMs ? scaled(opts.limitMs) : CLI_LIMIT_MS;
  const call = () =>
    execa(process.execPath, [bin, ...args], {
      cwd: opts.cwd,
      env: cleanEnv(opts.env),
      extendEnv: false,
      reject: false,
      timeout,
    });
  // A file that shares task nodes (shareTaskNodes) runs with the other files' generated tasks in its cache.
  const r = args[0] === 'run' ? await withSharedTaskNodes(opts.cwd, args, cleanEnv(opts.env), call) : await call();
  return { exitCode: r.exitCode ?? -1, stdout: String(r.stdout), stderr: String(r.stderr) };
}

/** Starts the built CLI without waiting (for kill and concurrency tests). */
export function cliStart(args: string[], opts: { cwd: string; env?: Record<string, string> }): ResultPromise {
  return execa(process.execPath, [CLI, ...args], {
    cwd: opts.cwd,
    env: cleanEnv(opts.env),
    extendEnv: false,
    reject: false,
    timeout: CLI_LIMIT_MS,
  });
}

/**
 * A copy of the built mlepipe in a fresh package root, for tests of its Python
 * environments: its own dist/ (the entry and its chunks, copied: a link would resolve back here),
 * python/ and an empty .venv/; everything else linked to this checkout.
 */
export async function packageCopy(): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'mlepipe-pkg-'));
  for (const name of await readdir(ROOT)) {
    if (['dist', 'python', '.venv', '.git'].includes(name)) continue;
    await symlink(join(ROOT, name), join(root, name));
  }
  await cp(join(ROOT, 'dist'), join(root, 'dist'), { recursive: true });
  await cp(join(ROOT, 'python'), join(root, 'python'), { recursive: true });
  await mkdir(join(root, '.venv'));
  return root;
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls until cond holds; gives up after timeoutMs (scaled) as a hang. */
export async function waitFor(
  cond: () => Promise<boolean> | boolean,
  timeoutMs = 30_000,
  what = 'condition',
): Promise<void> {
  const t0 = Date.now();
  const limit = scaled(timeoutMs);
  while (!(await cond())) {
    if (Date.now() - t0 > limit) throw new Error(`timed out after ${limit} ms waiting for ${what}`);
    await sleep(50);
  }
}

/** A loopback port that nothing listens on (bound, then closed), for unreachable-endpoint tests. */
export async function closedPort(): Promise<number> {
  const { createServer } = await import('node:net');
  const probe = createServer();
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', () => r()));
  const port = (probe.address() as { port: number }).port;
  await new Promise<void>((r) => probe.close(() => r()));
  return port;
}

/** A manifest with every field filled in, for cache tests; `over` sets what a test cares about. */
export function fakeManifest(over: Partial<Manifest> & { key: string }): Manifest {
  return {
    node: 'n',
    kind: 'shell',
    version: 1,
    params: {},
    inputs: {},
    extras: null,
    variant: {},
    files: [],
    started: '',
    finished: '',
    durationMs: 0,
    metrics: {},
    mlepipe: 'test',
    ...over,
  };
}

/** Every node log of a project (stage messages go there, not to the terminal), joined. */
export async function nodeLogs(dir: string): Promise<string> {
  const root = join(dir, '.mlepipe', 'logs');
  const parts: string[] = [];
  for (const f of await readdir(root, { recursive: true }).catch(() => [] as string[]))
    parts.push(await readFile(join(root, f), 'utf8').catch(() => ''));
  return parts.join('\n');
}

/**
 * Settings whose cache lies outside the project, for the tests of one file to share: a node that is the
 * same in several tests (their generated tasks) is built by the first and found cached by the others.
 * What a test reads from such a cache it finds by its own node's key (nodeKey), never by listing.
 */
export async function sharedCacheSettings(): Promise<{ cache: string; settings: string }> {
  const cache = await mkdtemp(join(tmpdir(), 'mlepipe-test-cache-'));
  return { cache, settings: `cache: ${cache}\n` };
}

/** A node's key, as `mlepipe plan --json FILE` computes it. */
export async function nodeKey(dir: string, node: string, file = 'e.yaml'): Promise<string> {
  const plan = JSON.parse((await cli(['plan', file, '--json'], { cwd: dir })).stdout) as {
    nodes: { id: string; key: string }[];
  };
  const key = plan.nodes.find((n) => n.id === node)?.key;
  if (!key) throw new Error(`no node ${node} in ${file}`);
  return key;
}

/** One node's log (its last attempt) in the cache at `cache`. */
export const nodeLog = (cache: string, key: string) =>
  readFile(join(cache, 'logs', `${key}.log`), 'utf8').catch(() => '');

/** A node's output folder, as `mlepipe outputs FILE NODE` prints it. */
export const outputsOf = async (dir: string, node: string, file = 'e.yaml') =>
  (await cli(['outputs', file, node], { cwd: dir })).stdout.trim();

/** A JSON Lines file's records. */
export const readJsonl = async (file: string) =>
  (await readFile(file, 'utf8'))
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));

/**
 * The head of a tiny eval experiment: a model served at `url` (the replay server), two generated tabular
 * tasks and their filter. The caller adds its `agents:` stage and tables.
 */
export const tinyEvalHead = (name: string, url: string) => `name: ${name}
models:
  tiny: { provider: openai, base_url: "${url}", model: tiny-coder, api_key_env: TINY_KEY, timeout_s: 10 }
stages:
  tasks: { uses: generate, with: { seeds: mlebench-tabular, count: 2, samples: [50, 80], seed: 1 } }
  verified: { uses: filter, needs: [tasks], with: { val: 0 } }
`;

/**
 * Training steps a node has published in a cache's item store (`items`: its items/ folder), under one node's
 * `key` or under all: a step being written lies in a `.tmp-` folder, step.json first, and counts only once
 * renamed into place (a kill before the rename leaves the step to run again).
 */
export async function publishedSteps(items: string, key?: string): Promise<number> {
  let n = 0;
  for (const k of key ? [key] : await readdir(items).catch(() => [] as string[])) {
    for (const item of await readdir(join(items, k)).catch(() => [] as string[])) {
      if (!item.includes('.tmp-') && existsSync(join(items, k, item, 'step.json'))) n++;
    }
  }
  return n;
}
