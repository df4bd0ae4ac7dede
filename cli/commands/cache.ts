import { resolve } from 'node:path';
import { collectGarbage, listEntries } from '../../pipelines/cache/gc.js';
import { resolveKeys, verifyCache } from '../../pipelines/cache/verify.js';
import { CacheStore } from '../../pipelines/cache/store.js';
import { loadSettings } from '../../pipelines/config/settings.js';
import { renderText } from '../../pipelines/report/tables.js';
import type { IO } from '../io.js';

export interface CacheArgs {
  /** Cache root; default from project settings found from the working folder. */
  cache?: string;
  dryRun?: boolean;
  json?: boolean;
  repair?: boolean;
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

/** Exit 1 while any checked entry is damaged (with --repair: while any could not be removed). */
export async function cacheVerifyCommand(keys: string[], args: CacheArgs, io: IO): Promise<number> {
  const store = await storeFor(args, io);
  const entries = await verifyCache(store, keys.length ? await resolveKeys(store, keys) : undefined, !!args.repair);
  const damaged = entries.filter((e) => e.state === 'damaged');
  const left = damaged.filter((e) => !e.removed);
  if (args.json) {
    io.out(JSON.stringify({ root: store.root, checked: entries.length, damaged: damaged.length, entries }, null, 2));
    return left.length ? 1 : 0;
  }
  io.out(`${store.root}: ${entries.length} entries checked, ${damaged.length} damaged`);
  for (const e of damaged) {
    const what = e.removed ? 'removed' : e.busy ? 'kept (a run holds its key)' : 'damaged';
    io.out(`  ${what} ${e.key.slice(0, 12)}  ${e.node ?? '?'}  ${e.problems.join(', ')}`);
  }
  if (damaged.length && !args.repair) {
    const bytes = humanBytes(damaged.reduce((s, e) => s + e.bytes, 0));
    io.out(
      `--repair would remove ${damaged.length} damaged ${damaged.length === 1 ? 'entry' : 'entries'} (${bytes}); the next run of an experiment that needs them rebuilds them`,
    );
  }
  return left.length ? 1 : 0;
}
