// What a run would do: every node `run` or `cached`, with the reason (no
// entry, params changed — which, input changed — which, forced, entry
// damaged — which file).
import { isDeepStrictEqual } from 'node:util';
import { UserError } from '../core/errors.js';
import { CacheStore } from './cache/store.js';
import { damageReason, type EntryCheck } from './cache/verify.js';
import { lockfilePath, readLockfile, type LockEntry, type LockFile } from './cache/lockfile.js';
import { compileGraph } from './compile/graph.js';
import { computeKeys, type KeyedGraph, type KeyedNode } from './compile/keys.js';
import type { Experiment } from './config/types.js';
import { suggestion } from '../core/jsonschema.js';

export type Action = 'run' | 'rescore' | 'cached' | 'skip';

export interface PlannedNode {
  readonly node: KeyedNode;
  readonly action: Action;
  readonly reason: string;
  /** rescore: the finished entry it is rebuilt from, or the node of this plan whose entry it will be. */
  readonly from?: { readonly key: string } | { readonly node: string };
  /** Run whatever the cache holds: `fresh` (--force) drops the items an earlier attempt finished, `items` (--rebuild) keeps them. */
  readonly forced?: 'fresh' | 'items';
}

export interface Plan {
  readonly experiment: Experiment;
  readonly graph: KeyedGraph;
  readonly nodes: readonly PlannedNode[];
  readonly store: CacheStore;
  readonly lockfile: string;
  readonly previous?: LockFile;
}

export interface PlanOptions {
  /** Run from scratch whatever the cache holds. true: every node; a string: that stage (all its variants) or node id. */
  force?: boolean | string;
  /** Run again whatever the cache holds, keeping the items an earlier attempt finished; selects as `force` does. */
  rebuild?: boolean | string;
  /** Run only this node (stage or id) and what it needs. */
  only?: string;
}

export async function makePlan(exp: Experiment, opts: PlanOptions = {}): Promise<Plan> {
  const graph = await computeKeys(exp, compileGraph(exp));
  const store = new CacheStore(exp.settings.cacheDir);
  const lockfile = lockfilePath(exp.file);
  const previous = await readLockfile(lockfile);
  const forcedHow = forcedBy(graph, opts);
  const wanted = opts.only ? withAncestors(graph, selectNodes(graph, opts.only, '--only')) : undefined;

  // Entries are checked all at once (stats; hashes only where those disagree), not one after another.
  const toCheck = graph.order.filter((id) => !(wanted && !wanted.has(id)) && !forcedHow.has(id));
  const listed = await store.listed();
  const check = (key: string): Promise<EntryCheck> =>
    listed && !listed.has(key) ? Promise.resolve({ state: 'absent' }) : store.check(key);
  const checks = new Map(
    await Promise.all(toCheck.map(async (id) => [id, await check(graph.nodes.get(id)!.key)] as const)),
  );

  const nodes: PlannedNode[] = [];
  for (const id of graph.order) {
    const node = graph.nodes.get(id)!;
    if (wanted && !wanted.has(id)) {
      nodes.push({ node, action: 'skip', reason: `not needed by --only ${opts.only}` });
      continue;
    }
    const forced = forcedHow.get(id);
    if (forced) {
      nodes.push({
        node,
        action: 'run',
        reason: forced === 'fresh' ? 'forced' : 'rebuild: keeps finished items',
        forced,
      });
      continue;
    }
    const found = checks.get(id)!;
    if (found.state === 'ok') {
      nodes.push({ node, action: 'cached', reason: 'cached' });
      continue;
    }
    if (found.state === 'damaged') {
      nodes.push({ node, action: 'run', reason: damageReason(found.problems) });
      continue;
    }
    const from = found.state === 'absent' ? await rescoreSource(node, previous?.nodes[id], store, nodes) : undefined;
    if (from) {
      nodes.push({ node, action: 'rescore', reason: from.reason, from: from.from });
      continue;
    }
    nodes.push({ node, action: 'run', reason: explain(node, previous?.nodes[id], graph) });
  }
  return { experiment: exp, graph, nodes, store, lockfile, previous };
}

/**
 * A finished entry that did this node's work with other post-hoc params: the one the lock file last
 * recorded for the node, else the newest under its base key, else a node earlier in this plan that will
 * do the work (an ablation over rewards runs its episodes once).
 */
async function rescoreSource(
  node: KeyedNode,
  prev: LockEntry | undefined,
  store: CacheStore,
  planned: readonly PlannedNode[],
): Promise<{ from: PlannedNode['from']; reason: string } | undefined> {
  if (!node.baseKey) return undefined;
  const keys = [...(prev ? [prev.key] : []), ...(await store.sameWork(node.baseKey)).reverse()];
  for (const key of new Set(keys)) {
    const found = await store.check(key);
    if (found.state !== 'ok' || found.manifest.baseKey !== node.baseKey) continue;
    return {
      from: { key },
      reason: rescoreReason(
        found.manifest.params,
        node,
        `the recorded runs of ${found.manifest.node} (${key.slice(0, 12)})`,
      ),
    };
  }
  const sibling = planned.find((p) => p.node.baseKey === node.baseKey && (p.action === 'run' || p.action === 'cached'));
  if (sibling)
    return {
      from: { node: sibling.node.id },
      reason: rescoreReason(sibling.node.params, node, `${sibling.node.id}'s runs, once it has them`),
    };
  return undefined;
}

function rescoreReason(had: unknown, node: KeyedNode, source: string): string {
  const changed = changedPaths(had, node.params);
  return `rescore: only ${changed.length ? changed.join(', ') : 'what the reward reads'} changed; rebuilt from ${source}, nothing rerun`;
}

/** The nodes --force and --rebuild name, and how each runs; a node both name runs from scratch. */
function forcedBy(graph: KeyedGraph, opts: PlanOptions): Map<string, 'fresh' | 'items'> {
  const out = new Map<string, 'fresh' | 'items'>();
  const pick = (sel: boolean | string | undefined, flag: string, how: 'fresh' | 'items') => {
    if (!sel) return;
    for (const id of sel === true ? graph.order : selectNodes(graph, sel, flag)) if (!out.has(id)) out.set(id, how);
  };
  pick(opts.force, '--force', 'fresh');
  pick(opts.rebuild, '--rebuild', 'items');
  return out;
}

/** Nodes named by a stage (all variants) or an exact node id. */
export function selectNodes(graph: KeyedGraph, name: string, flag: string): Set<string> {
  const out = new Set<string>();
  for (const [id, n] of graph.nodes) if (id === name || n.stage.id === name) out.add(id);
  if (!out.size) {
    const known = [...new Set([...graph.nodes.values()].flatMap((n) => [n.stage.id, n.id]))];
    throw new UserError(
      `${flag} ${name}: no such node${suggestion(name, known)} (nodes: ${[...graph.nodes.keys()].join(', ')})`,
    );
  }
  return out;
}

function withAncestors(graph: KeyedGraph, ids: Set<string>): Set<string> {
  const out = new Set<string>();
  const stack = [...ids];
  while (stack.length) {
    const id = stack.pop()!;
    if (out.has(id)) continue;
    out.add(id);
    stack.push(...graph.nodes.get(id)!.inputs);
  }
  return out;
}

function explain(node: KeyedNode, prev: LockEntry | undefined, graph: KeyedGraph): string {
  if (!prev) return 'no entry';
  if (prev.key === node.key) return 'no entry (removed from the cache)';
  if (prev.kind !== node.kind || prev.version !== node.version)
    return `stage implementation changed (${prev.kind} v${prev.version} → ${node.kind} v${node.version})`;
  const reasons: string[] = [];
  const params = changedPaths(prev.params, node.params);
  if (params.length) reasons.push(`params changed: ${params.join(', ')}`);
  const inputs = [...new Set([...Object.keys(prev.inputs), ...Object.keys(node.inputKeys)])].filter(
    (k) => prev.inputs[k] !== node.inputKeys[k],
  );
  if (inputs.length) {
    const shown = inputs.map((k) => graph.nodes.get(k)?.id ?? k);
    reasons.push(`input changed: ${shown.join(', ')}`);
  }
  const extras = changedPaths(prev.extras, node.extras);
  if (extras.length) reasons.push(`dependency changed: ${extras.join(', ')}`);
  return reasons.join('; ') || 'no entry';
}

/** Dotted paths whose values differ between two JSON values. */
export function changedPaths(a: unknown, b: unknown): string[] {
  return changedPathList(a, b).map((p) => p.join('.') || '(value)');
}

/** Paths (as key lists) whose values differ between two JSON values. */
export function changedPathList(a: unknown, b: unknown, prefix: string[] = []): string[][] {
  const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
  if (isObj(a) && isObj(b)) {
    const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
    return keys.flatMap((k) => changedPathList(a[k], b[k], [...prefix, k]));
  }
  return isDeepStrictEqual(a, b) ? [] : [prefix];
}
