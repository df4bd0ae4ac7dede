// Metrics of the current graph's nodes: from the cache entry of each node's
// current key, else from the lock file when it recorded that same key.
import type { Metrics } from '../../stages/contract.js';
import type { Plan } from '../plan.js';

export interface NodeMetrics {
  id: string;
  stage: string;
  variant: Record<string, unknown>;
  key: string;
  /** Undefined when the node has not run with its current key. */
  metrics?: Metrics;
  dir?: string;
}

export async function currentMetrics(plan: Plan): Promise<Map<string, NodeMetrics>> {
  const out = new Map<string, NodeMetrics>();
  for (const p of plan.nodes) {
    const n = p.node;
    // A damaged entry is never read (the report may follow the run that rebuilt it, so check now).
    const found = await plan.store.check(n.key);
    const m = found.state === 'ok' ? found.manifest : undefined;
    const fromLock = plan.previous?.nodes[n.id];
    out.set(n.id, {
      id: n.id,
      stage: n.stage.id,
      variant: n.variant as Record<string, unknown>,
      key: n.key,
      metrics: m?.metrics ?? (fromLock?.key === n.key ? fromLock.metrics : undefined),
      dir: m ? plan.store.entryDir(n.key) : undefined,
    });
  }
  return out;
}
