// Resolved experiment → node graph. Ablations expand here (docs/stages.md): the
// target and everything downstream are cloned once per matrix combination,
// upstream nodes stay shared, and the ablate node collects every clone.
import graphlib from '@dagrejs/graphlib';
import { UserError } from '../../core/errors.js';
import { variantLabel } from '../../stages/ablate/index.js';
import { setPath } from '../config/merge.js';
import type { Experiment, ResolvedStage } from '../config/types.js';
import { dotted, keyPos, type Origins } from '../../core/source.js';

export interface GraphNode {
  /** Unique id: the stage name, plus `@k=v,...` for ablation clones. */
  readonly id: string;
  /** The stage it was made from. */
  readonly stage: ResolvedStage;
  readonly params: Readonly<Record<string, unknown>>;
  readonly variant: Readonly<Record<string, unknown>>;
  /** Ids of the nodes it reads, in a stable order. */
  readonly inputs: readonly string[];
}

export interface CompiledGraph {
  readonly nodes: ReadonlyMap<string, GraphNode>;
  /** Deterministic topological order (declaration order breaks ties). */
  readonly order: readonly string[];
}

interface Mutable {
  id: string;
  stage: ResolvedStage;
  params: Record<string, unknown>;
  variant: Record<string, unknown>;
  inputs: string[];
}

export function compileGraph(exp: Pick<Experiment, 'stages' | 'origins'>): CompiledGraph {
  const stageOrder = exp.stages.map((s) => s.id);
  let nodes: Mutable[] = exp.stages
    .filter((s) => s.uses !== 'ablate')
    .map((s) => ({
      id: s.id,
      stage: s,
      params: structuredClone(s.params) as Record<string, unknown>,
      variant: {},
      inputs: [...s.needs],
    }));

  // Upstream targets first, so a downstream ablation multiplies the clones of an upstream one.
  const ablations = exp.stages.filter((s) => s.uses === 'ablate');
  const rank = topoRank(exp.stages);
  ablations.sort(
    (a, b) =>
      rank.get(a.target as string)! - rank.get(b.target as string)! ||
      stageOrder.indexOf(a.id) - stageOrder.indexOf(b.id),
  );
  for (const ab of ablations) nodes = expand(nodes, ab, exp.origins);

  const byId = new Map(nodes.map((n) => [n.id, n]));
  const order = topoOrder(nodes, stageOrder);
  return { nodes: byId as Map<string, GraphNode>, order };
}

function expand(nodes: Mutable[], ab: ResolvedStage, origins: Origins): Mutable[] {
  const combos = cartesian(ab.matrix ?? {});
  const targets = nodes.filter((n) => n.stage.id === ab.target);
  const cloned = new Map<string, string[]>(); // original id → its clones
  const result: Mutable[] = [];
  const clonedSet = new Set<string>();
  const children = new Map<string, Mutable[]>();
  for (const n of nodes) for (const i of n.inputs) children.set(i, [...(children.get(i) ?? []), n]);

  for (const t of targets) {
    // The target and every regular node downstream of it; collectors are re-pointed instead.
    const set: Mutable[] = [];
    const stack = [t];
    while (stack.length) {
      const n = stack.pop()!;
      if (set.includes(n)) continue;
      set.push(n);
      for (const c of children.get(n.id) ?? []) if (c.stage.uses !== 'ablate') stack.push(c);
    }
    for (const n of set) clonedSet.add(n.id);
    for (const combo of combos) {
      const renamed = new Map<string, string>();
      for (const n of set) {
        const variant = { ...n.variant, ...combo };
        renamed.set(n.id, `${n.stage.id}@${variantLabel(variant)}`);
      }
      for (const n of set) {
        const params = structuredClone(n.params);
        if (n === t) for (const [k, v] of Object.entries(combo)) setPath(params, k.split('.'), structuredClone(v));
        const id = renamed.get(n.id)!;
        result.push({
          id,
          stage: n.stage,
          params,
          variant: { ...n.variant, ...combo },
          inputs: n.inputs.map((i) => renamed.get(i) ?? i),
        });
        cloned.set(n.id, [...(cloned.get(n.id) ?? []), id]);
      }
    }
  }
  const out: Mutable[] = [];
  for (const n of nodes) {
    if (clonedSet.has(n.id)) continue;
    // An earlier collector that read a node now cloned reads all the clones.
    out.push({ ...n, inputs: n.inputs.flatMap((i) => cloned.get(i) ?? [i]) });
  }
  out.push(...result);
  const collector: Mutable = {
    id: ab.id,
    stage: ab,
    params: structuredClone(ab.params) as Record<string, unknown>,
    variant: {},
    inputs: [...cloned.values()].flat(),
  };
  out.push(collector);
  const seen = new Set<string>();
  for (const n of out) {
    if (seen.has(n.id)) {
      // Values that spell the same within one matrix are refused at validation; this is two ablations meeting.
      const path = ['stages', ab.id, 'matrix'];
      throw new UserError([
        {
          pos: keyPos(origins, path),
          path: dotted(path),
          message: `ablation ${ab.id} produces two nodes named ${n.id}: give the matrix values distinct spellings`,
        },
      ]);
    }
    seen.add(n.id);
  }
  return out;
}

/** Every combination of an ablation's matrix values, in matrix order. */
export function cartesian(matrix: Readonly<Record<string, readonly unknown[]>>): Record<string, unknown>[] {
  let combos: Record<string, unknown>[] = [{}];
  for (const [k, values] of Object.entries(matrix)) {
    combos = combos.flatMap((c) => values.map((v) => ({ ...c, [k]: v })));
  }
  return combos;
}

// Rank of each stage in the needs order (targets of ablations sorted by it).
function topoRank(stages: readonly ResolvedStage[]): Map<string, number> {
  const g = new graphlib.Graph();
  for (const s of stages) g.setNode(`s:${s.id}`);
  for (const s of stages) for (const n of s.needs) g.setEdge(`s:${n}`, `s:${s.id}`);
  const order: string[] = graphlib.alg.topsort(g);
  return new Map(order.map((id, i) => [id.slice(2), i]));
}

// Kahn's algorithm with declaration order, then creation order, as the
// tie-break: the same file always gives the same order.
function topoOrder(nodes: Mutable[], stageOrder: string[]): string[] {
  const pending = new Map(nodes.map((n) => [n.id, new Set(n.inputs)]));
  const dependents = new Map<string, string[]>();
  for (const n of nodes) for (const i of n.inputs) dependents.set(i, [...(dependents.get(i) ?? []), n.id]);
  const rankOf = new Map(nodes.map((n) => [n.id, stageOrder.indexOf(n.stage.id)]));
  // Within a stage, clones keep matrix order (the order they were made in).
  const made = new Map(nodes.map((n, i) => [n.id, i]));
  const cmp = (a: string, b: string) => rankOf.get(a)! - rankOf.get(b)! || made.get(a)! - made.get(b)!;
  const ready = nodes
    .filter((n) => n.inputs.length === 0)
    .map((n) => n.id)
    .sort(cmp);
  const order: string[] = [];
  while (ready.length) {
    const id = ready.shift()!;
    order.push(id);
    for (const d of dependents.get(id) ?? []) {
      const p = pending.get(d)!;
      p.delete(id);
      if (p.size === 0) {
        ready.push(d);
        ready.sort(cmp);
      }
    }
  }
  if (order.length !== nodes.length) throw new UserError('the stages form a cycle');
  return order;
}
