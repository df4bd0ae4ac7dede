import { resolve } from 'node:path';
import { collectGarbage, listEntries } from '../../pipelines/cache/gc.js';
import { CacheStore } from '../../pipelines/cache/store.js';
import { loadSettings } from '../../pipelines/config/settings.js';
import { renderText } from '../../pipelines/report/tables.js';
import type { IO } from '../io.js';

export interface CacheArgs {
  /** Cache root; default from project settings found from the working folder. */
  cache?: string;
  dryRun?: boolean;
  json?: boolean;
}

async function storeFor(args: CacheArgs, io: IO): Promise<CacheStore> {
  if (args.cache) return new CacheStore(resolve(args.cache));
  const settings = await loadSettings(process.cwd(), io.env);
  return new CacheStore(settings.cacheDir);
}

export function humanBytes(n: number): string {
  const units = ['B', 'KB', 'MB', 'GB', 'TB'];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) {
    n /= 1024;
    i++;
  }
  return `${i ? n.toFixed(1) : n} ${units[i]}`;
}

export async function cacheLsCommand(args: CacheArgs, io: IO): Promise<number> {
  const store = await storeFor(args, io);
  const entries = await listEntries(store);
  if (args.json) {
    io.out(JSON.stringify({ root: store.root, entries }, null, 2));
    return 0;
  }
  io.out(`${store.root}: ${entries.length} entries, ${humanBytes(entries.reduce((s, e) => s + e.bytes, 0))}`);
  if (entries.length) {
    const rows = entries.map((e) => ({
      key: e.key.slice(0, 12),
      node: e.node ?? '?',
      kind: e.kind ?? '?',
      size: humanBytes(e.bytes),
      finished: e.finished?.replace('T', ' ').slice(0, 19) ?? '',
      used_by: e.referencedBy.join(', ') || '(unreferenced)',
    }));
    io.out(renderText({ columns: ['key', 'node', 'kind', 'size', 'finished', 'used_by'], rows }));
  }
  return 0;
}

export async function cacheGcCommand(args: CacheArgs, io: IO): Promise<number> {
  const store = await storeFor(args, io);
  const r = await collectGarbage(store, !!args.dryRun);
  const verb = args.dryRun ? 'would remove' : 'removed';
  for (const e of r.removed) io.out(`${verb} ${e.key.slice(0, 12)}  ${e.node ?? '?'}  ${humanBytes(e.bytes)}`);
  for (const o of r.other) io.out(`${verb} ${o}`);
  io.out(`${verb} ${r.removed.length} entries (${humanBytes(r.bytes)}), kept ${r.kept}`);
  return 0;
}
