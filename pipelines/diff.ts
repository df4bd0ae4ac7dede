// `mlepipe diff A B`: which parameters differ, which nodes that touches, and
// the metrics of both side by side.
import type { MetricValue } from '../stages/contract.js';
import type { Experiment } from './config/types.js';
import { changedPathList, type Plan } from './plan.js';
import { currentMetrics } from './report/metrics.js';
import { getPath } from './config/merge.js';

export interface ParamChange {
  path: string;
  a: unknown;
  b: unknown;
}

export interface NodeChange {
  id: string;
  status: 'same' | 'changed' | 'only-a' | 'only-b';
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
      exp.stages.map((s) => [s.id, { uses: s.uses, needs: s.needs, with: s.params, target: s.target, matrix: s.matrix, on: s.on }]),
    ),
    tables: exp.tables,
  };
}

export async function diffPlans(a: Plan, b: Plan): Promise<DiffResult> {
  const na = normalized(a.experiment);
  const nb = normalized(b.experiment);
  const params = changedPathList(na, nb).map((path) => ({ path: path.join('.'), a: getPath(na, path), b: getPath(nb, path) }));

  const keysA = new Map(a.nodes.map((p) => [p.node.id, p.node.key]));
  const keysB = new Map(b.nodes.map((p) => [p.node.id, p.node.key]));
  const ids = [...keysA.keys(), ...[...keysB.keys()].filter((id) => !keysA.has(id))];
  const nodes: NodeChange[] = ids.map((id) => ({
    id,
    status: !keysB.has(id) ? 'only-a' : !keysA.has(id) ? 'only-b' : keysA.get(id) === keysB.get(id) ? 'same' : 'changed',
  }));

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
  return { a: a.experiment.file, b: b.experiment.file, params, nodes, metrics };
}
