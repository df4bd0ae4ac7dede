// `mlepipe diff A B`: what was written differently (and where), which resolved
// parameters differ, which nodes that touches, and the metrics of both side by side.
import type { MetricValue } from '../stages/contract.js';
import type { Experiment } from './config/types.js';
import { changedPathList, type Plan } from './plan.js';
import type { KeyedNode } from './compile/keys.js';
import { currentMetrics } from './report/metrics.js';
import { getPath } from './config/merge.js';
import { originOf, type Origins, type Path } from '../core/source.js';

export interface ParamChange {
  path: string;
  a: unknown;
  b: unknown;
}

/** A value written differently: in a file of the `extends` chain, or by `-S`. */
export interface WrittenChange {
  path: string;
  a: unknown;
  b: unknown;
  /** Where each side's value was written (`FILE:LINE:COL`, or the `-S` argument); absent where it was not. */
  at: { a?: string; b?: string };
}

export interface NodeChange {
  id: string;
  /** rescore: changed only in post-hoc params (eval's reward), so rebuilt from the other side's recorded runs. */
  status: 'same' | 'changed' | 'rescore' | 'only-a' | 'only-b';
}

export interface MetricRow {
  node: string;
  metric: string;
  a: MetricValue;
  b: MetricValue;
  delta: number | null;
}

export interface DiffResult {
  a: string;
  b: string;
  /** The source change, before `${vars.…}` and defaults resolve it. */
  written: WrittenChange[];
  /** What the compiler sees, defaults included: where the written change lands. */
  params: ParamChange[];
  nodes: NodeChange[];
  metrics: MetricRow[];
}

/** The comparable form of an experiment: what decides outputs, defaults included. */
function normalized(exp: Experiment): Record<string, unknown> {
  return {
    models: exp.models,
    rewards: exp.rewards,
    stages: Object.fromEntries(
      exp.stages.map((s) => [
        s.id,
        { uses: s.uses, needs: s.needs, with: s.params, target: s.target, matrix: s.matrix, on: s.on },
      ]),
    ),
    tables: exp.tables,
  };
}

function writtenAt(origins: Origins, path: Path): string | undefined {
  const pos = originOf(origins, path)?.value;
  if (!pos) return undefined;
  // An override has one line: its argument names it better than a column.
  return pos.file.startsWith('-S ') ? pos.file : `${pos.file}:${pos.line}:${pos.col}`;
}

function writtenChanges(a: Plan['experiment'], b: Plan['experiment']): WrittenChange[] {
  return changedPathList(a.written, b.written).map((path) => {
    const [va, vb] = [getPath(a.written, path), getPath(b.written, path)];
    const at = {
      ...(va === undefined ? {} : { a: writtenAt(a.origins, path) }),
      ...(vb === undefined ? {} : { b: writtenAt(b.origins, path) }),
    };
    return { path: path.join('.'), a: va, b: vb, at };
  });
}

export async function diffPlans(a: Plan, b: Plan): Promise<DiffResult> {
  const na = normalized(a.experiment);
  const nb = normalized(b.experiment);
  const params = changedPathList(na, nb).map((path) => ({
    path: path.join('.'),
    a: getPath(na, path),
    b: getPath(nb, path),
  }));

  const keysA = new Map(a.nodes.map((p) => [p.node.id, p.node]));
  const keysB = new Map(b.nodes.map((p) => [p.node.id, p.node]));
  const ids = [...keysA.keys(), ...[...keysB.keys()].filter((id) => !keysA.has(id))];
  const status = (x: KeyedNode | undefined, y: KeyedNode | undefined): NodeChange['status'] => {
    if (!y) return 'only-a';
    if (!x) return 'only-b';
    if (x.key === y.key) return 'same';
    return x.baseKey !== undefined && x.baseKey === y.baseKey ? 'rescore' : 'changed';
  };
  const nodes: NodeChange[] = ids.map((id) => ({ id, status: status(keysA.get(id), keysB.get(id)) }));

  const ma = await currentMetrics(a);
  const mb = await currentMetrics(b);
  const metrics: MetricRow[] = [];
  for (const id of ids) {
    const x = ma.get(id)?.metrics ?? {};
    const y = mb.get(id)?.metrics ?? {};
    for (const m of [...new Set([...Object.keys(x), ...Object.keys(y)])]) {
      const va = x[m] ?? null;
      const vb = y[m] ?? null;
      const delta = typeof va === 'number' && typeof vb === 'number' ? vb - va : null;
      metrics.push({ node: id, metric: m, a: va, b: vb, delta });
    }
  }
  return {
    a: a.experiment.file,
    b: b.experiment.file,
    written: writtenChanges(a.experiment, b.experiment),
    params,
    nodes,
    metrics,
  };
}
