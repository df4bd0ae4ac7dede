// What the HTML report shows, gathered from the current graph's nodes: the
// tables, the figures' Vega-Lite specs, the task funnel, the training curves
// and an index of every recorded trajectory. The trajectories themselves are
// written one file each beside the page and loaded when opened, so the page
// stays small however many episodes an experiment holds.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { readTrajectories, trajectoryFiles } from '../../../agents/trajectory-files.js';
import { readJsonl } from '../../../core/json-files.js';
import { variantLabel } from '../../../stages/ablate/index.js';
import type { Plan } from '../../plan.js';
import { figureSpecs } from '../figures.js';
import type { NodeMetrics } from '../metrics.js';
import { comparisonNotes, tableView, type Table } from '../tables.js';

/** One row of the trajectory index (short keys: the index of 10,000 episodes is inlined in the page). */
export interface IndexEntry {
  /** File number under trajectories/. */
  i: number;
  /** Node id, and the training step for a grpo node's rollouts. */
  n: string;
  s: string;
  step?: number;
  task: string;
  policy: string;
  rep: number;
  outcome: Outcome;
  reward: number | null;
  score: number | null;
  turns: number;
  scaffold: string;
}

export type Outcome = 'gold' | 'silver' | 'bronze' | 'above median' | 'valid' | 'invalid' | 'crashed';

export interface HtmlTable {
  name: string;
  description?: string;
  columns: string[];
  rows: string[][];
  /** The paper's source and the notes beneath a compared table (what ✓ means, the paper's rows not run here). */
  reference?: { source: string; notes: string[] };
}

export interface Curve {
  node: string;
  stage: string;
  kind: 'grpo' | 'sft';
  variant: string;
  points: Record<string, number | null>[];
}

export interface FunnelStep {
  node: string;
  steps: { name: string; count: number }[];
}

export interface PageData {
  experiment: { name: string; description?: string; file: string };
  generated: string;
  tables: HtmlTable[];
  figures: { name: string; spec: Record<string, unknown> }[];
  funnel: FunnelStep[];
  curves: Curve[];
  /** Node id → its stage and variant label, for the side-by-side view of ablation variants. */
  nodes: Record<string, { stage: string; variant: string }>;
  index: IndexEntry[];
}

/** A trajectory as recorded, loosely typed: eval and grpo records share the fields the page reads. */
export type Recorded = Record<string, unknown> & {
  task_id?: string;
  policy?: string;
  sample?: number;
  variables?: Record<string, number>;
  reward?: number | null;
  turns?: unknown[];
};

export function outcomeOf(t: Recorded): Outcome {
  const v = t.variables;
  if ('crashed' in t || !v) return 'crashed';
  if (v.gold) return 'gold';
  if (v.silver) return 'silver';
  if (v.bronze) return 'bronze';
  if (v.median) return 'above median';
  return v.execute ? 'valid' : 'invalid';
}

function htmlTable(name: string, t: Table): HtmlTable {
  const { head, cells } = tableView(t);
  const out: HtmlTable = { name, description: t.description, columns: head, rows: cells };
  if (t.comparison) out.reference = { source: t.comparison.source, notes: comparisonNotes(t).slice(1) };
  return out;
}

/** A grpo or sft node's training curve, one record per logged step; a node that logged none has none. */
async function trainingPoints(dir: string): Promise<Record<string, number | null>[]> {
  const file = join(dir, 'metrics.jsonl');
  return existsSync(file) ? readJsonl<Record<string, number | null>>(file) : [];
}

/**
 * Gathers the page's data; `write(i, t)` is handed each trajectory once, in index order, so the caller
 * writes it out and keeps nothing in memory.
 */
export async function pageData(
  plan: Plan,
  metrics: Map<string, NodeMetrics>,
  tables: Record<string, Table>,
  write: (i: number, t: Recorded) => Promise<void>,
): Promise<PageData> {
  const exp = plan.experiment;
  const figures = Object.entries(await figureSpecs(plan, metrics)).map(([name, spec]) => ({ name, spec }));
  const funnel: FunnelStep[] = [];
  const curves: Curve[] = [];
  const nodes: PageData['nodes'] = {};
  const index: IndexEntry[] = [];
  for (const m of metrics.values()) {
    const kind = plan.graph.nodes.get(m.id)?.stage.uses;
    nodes[m.id] = { stage: m.stage, variant: variantLabel(m.variant) };
    if (kind === 'filter' && m.metrics) {
      const names = ['input', 'evaluator_ok', 'sane', 'unique'];
      funnel.push({
        node: m.id,
        steps: names
          .filter((k) => typeof m.metrics![k] === 'number')
          .map((k) => ({ name: k, count: m.metrics![k] as number })),
      });
    }
    if (!m.dir) continue;
    if (kind === 'grpo' || kind === 'sft') {
      const points = await trainingPoints(m.dir);
      if (points.length)
        curves.push({ node: m.id, stage: m.stage, kind, variant: variantLabel(m.variant) || m.id, points });
    }
    for (const { file, step } of trajectoryFiles(m.dir)) {
      // Read loosely: the page shows eval and grpo records alike, whatever else they hold.
      for (const t of (await readTrajectories(file)) as unknown as Recorded[]) {
        const i = index.length;
        const v = t.variables;
        index.push({
          i,
          n: m.id,
          s: m.stage,
          ...(step !== undefined ? { step } : {}),
          task: String(t.task_id ?? '?'),
          policy: String(t.policy ?? '?'),
          rep: Number(t.sample ?? 0),
          outcome: outcomeOf(t),
          reward: typeof t.reward === 'number' ? t.reward : null,
          score: v && typeof (t.evaluation as { score?: unknown } | null)?.score === 'number' ? v.score : null,
          turns: Array.isArray(t.turns) ? t.turns.length : 0,
          scaffold: String(t.scaffold ?? ''),
        });
        await write(i, { ...t, node: m.id, ...(step !== undefined ? { step } : {}) });
      }
    }
  }
  return {
    experiment: { name: exp.name, description: exp.description, file: exp.file },
    generated: new Date().toISOString(),
    tables: Object.entries(tables).map(([name, t]) => htmlTable(name, t)),
    figures,
    funnel,
    curves,
    nodes,
    index,
  };
}
