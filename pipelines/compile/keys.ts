// Node keys (docs/cache.md): sha256 of the canonical JSON of kind, implementation
// version, resolved params, input keys and the stage's own extras. Nothing
// that does not change the output (concurrency, hosts, progress) goes in.
import { dirname } from 'node:path';
import { ParamError, UserError } from '../../core/errors.js';
import { canonicalJson, sha256 } from '../../core/hash.js';
import { choosePython } from '../../core/python.js';
import { pythonIdentity, type PythonIdentity } from '../../core/python-identity.js';
import { getStage } from '../../stages/registry.js';
import { dotted, valuePos } from '../../core/source.js';
import type { Experiment } from '../config/types.js';
import type { CompiledGraph, GraphNode } from './graph.js';

export interface KeyedNode extends GraphNode {
  readonly key: string;
  readonly kind: string;
  readonly version: number;
  /** Input name (or id, when several share a stage) → key, as hashed. */
  readonly inputKeys: Readonly<Record<string, string>>;
  readonly extras: unknown;
  /**
   * For stages that can rescore: the key without the params read only after the work (and extras of
   * those names). Nodes that share it did the same work; one's entry can be rescored into another's.
   */
  readonly baseKey?: string;
}

export interface KeyedGraph {
  readonly nodes: ReadonlyMap<string, KeyedNode>;
  readonly order: readonly string[];
}

export interface KeyOptions {
  /** The Python identity nodes that run Python are keyed on (default: that of the interpreter settings choose). */
  python?: () => Promise<PythonIdentity>;
}

export async function computeKeys(exp: Experiment, graph: CompiledGraph, opts: KeyOptions = {}): Promise<KeyedGraph> {
  const keyed = new Map<string, KeyedNode>();
  const extrasCache = new Map<string, Promise<unknown>>();
  const experimentDir = dirname(exp.file);
  // Asked for only by stages that run Python, at most once.
  let identity: Promise<PythonIdentity> | undefined;
  const python = () => (identity ??= opts.python ? opts.python() : pythonIdentity(choosePython(exp.settings.python)));
  for (const id of graph.order) {
    const n = graph.nodes.get(id)!;
    const stage = getStage(n.stage.uses);
    if (!stage) throw new UserError(`unknown stage kind ${n.stage.uses}`);
    const inputs = n.inputs.map((i) => keyed.get(i)!);
    const params = stage.resolve ? stage.resolve(n.params, { inputKinds: inputs.map((i) => i.kind) }) : n.params;
    let extras: unknown = null;
    if (stage.keyExtras) {
      const memo = `${n.stage.id}\u0000${canonicalJson(params)}`;
      if (!extrasCache.has(memo))
        extrasCache.set(
          memo,
          stage.keyExtras(params, {
            experimentDir,
            models: exp.models,
            rewards: exp.rewards,
            python,
            pythonPath: choosePython(exp.settings.python).path,
          }),
        );
      try {
        extras = await extrasCache.get(memo);
      } catch (err) {
        if (!(err instanceof ParamError)) throw err;
        const path = ['stages', n.stage.id, 'with', ...err.param];
        throw new UserError([
          { pos: valuePos(exp.origins, path), path: dotted(path), message: err.diagnostics[0].message },
        ]);
      }
    }
    const names = inputs.map((i) => i.stage.id);
    const unique = new Set(names).size === names.length;
    const inputKeys: Record<string, string> = {};
    for (const i of inputs) inputKeys[unique ? i.stage.id : i.id] = i.key;
    const hashedParams = Object.fromEntries(Object.entries(params).filter(([k]) => !stage.keyIgnore?.includes(k)));
    const key = sha256(
      canonicalJson({ kind: stage.kind, version: stage.version, params: hashedParams, inputs: inputKeys, extras }),
    );
    const baseKey = stage.rescore
      ? sha256(
          canonicalJson({
            kind: stage.kind,
            version: stage.version,
            rescorable: true,
            params: without(hashedParams, stage.rescore.params),
            inputs: inputKeys,
            extras: without(extras, stage.rescore.params),
          }),
        )
      : undefined;
    keyed.set(id, {
      ...n,
      params,
      key,
      kind: stage.kind,
      version: stage.version,
      inputKeys,
      extras,
      ...(baseKey ? { baseKey } : {}),
    });
  }
  return { nodes: keyed, order: graph.order };
}

/** An object without the named fields (anything else as it is). */
function without(v: unknown, names: readonly string[]): unknown {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return v;
  return Object.fromEntries(Object.entries(v).filter(([k]) => !names.includes(k)));
}
