// A StageContext for tests that call a stage, or a helper that takes one, directly: every field has a harmless
// default, so that a test names only what it is about and the compiler still checks what it names.
import { existsSync } from 'node:fs';
import { mkdir, readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ItemStore, StageContext } from '../stages/contract.js';

/** Items kept as plain folders under `root`: enough for a stage run outside the engine. */
export function folderItems(root: string): ItemStore {
  return {
    root,
    get: async (id) => (existsSync(join(root, id)) ? join(root, id) : undefined),
    put: async (id, write) => {
      const dir = join(root, id);
      await mkdir(dir, { recursive: true });
      await write(dir);
      return dir;
    },
    list: async () => readdir(root).catch(() => []),
  };
}

/**
 * A context with `params` and the fields in `over`; the rest defaults to a node named `node`, folders under
 * the system's temp folder (each test file has its own), the process backend, no inputs, models or rewards,
 * a signal that never aborts, and a log and progress that drop what they are given.
 */
export function stageContext<P>(params: P, over: Partial<StageContext<P>> = {}): StageContext<P> {
  const base = over.projectRoot ?? over.experimentDir ?? tmpdir();
  return {
    node: { id: 'node', name: 'node', key: '0'.repeat(64), variant: {} },
    params,
    experimentDir: base,
    projectRoot: base,
    python: 'python3',
    cacheRoot: join(base, 'cache'),
    sandbox: { backend: 'process' },
    inputs: [],
    models: {},
    rewards: {},
    outDir: join(base, 'out'),
    items: folderItems(join(base, 'items')),
    signal: new AbortController().signal,
    log: () => {},
    progress: () => {},
    resumed: () => {},
    ...over,
  };
}
