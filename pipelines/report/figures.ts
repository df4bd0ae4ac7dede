// The experiment's `figures:` drawn as SVG with Vega-Lite (rendered
// headless, no browser or canvas), into reports/<experiment>/ beside the
// experiment file. Rows come from the same sources as tables.
import { mkdir, readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { writeFileAtomic } from '../../core/fs.js';
import { isObject, readJson } from '../../core/json-files.js';
import { canonicalJson, sha256 } from '../../core/hash.js';
import { VERSION } from '../../core/version.js';
import type { ResolvedFigure } from '../config/types.js';
import type { Plan } from '../plan.js';
import { currentMetrics, type NodeMetrics } from './metrics.js';
import { figureSpec } from './figure-spec.js';
import { breakdownRows, sourceNodes, type Row } from './tables.js';
import { paperPoints } from './compare.js';
import { variantLabel } from '../../stages/ablate/index.js';

/** A figure's spec from its rows, with the paper's points where it names a reference. */
const specOf = (def: ResolvedFigure, rows: Row[]) =>
  figureSpec(def, rows, def.reference ? paperPoints(rows, def, def.reference) : []);

/** A matrix key as rows carry it: its last part (`params.lr` → `lr`). */
const lastPart = (key: string) => key.split('.').pop()!;

/** The series of a variant in a figure: its matrix values other than the figure's x and color (`seed=1`). */
export function seriesOf(variant: Readonly<Record<string, unknown>>, def: ResolvedFigure): string {
  return variantLabel(
    Object.fromEntries(Object.entries(variant).filter(([k]) => ![def.x, def.color].includes(lastPart(k)))),
  );
}

/**
 * Rows for a figure: a breakdown, or one row per node (its metrics and matrix values). Each row also names
 * its `series`: the node's matrix values other than the figure's x and color, which tell a line figure's
 * variants apart (empty where x or color is all the matrix varies).
 */
async function figureRows(plan: Plan, metrics: Map<string, NodeMetrics>, def: ResolvedFigure): Promise<Row[]> {
  const nodes = sourceNodes(plan, metrics, def.from);
  const matrix = (n: NodeMetrics) => Object.fromEntries(Object.entries(n.variant).map(([k, v]) => [lastPart(k), v]));
  const head = (n: NodeMetrics) => ({ ...(matrix(n) as Row), variant: n.id, series: seriesOf(n.variant, def) });
  if (def.rows !== 'variant' && def.rows !== 'node') {
    const out: Row[] = [];
    for (const n of nodes) for (const r of (await breakdownRows([n], def.rows)).rows) out.push({ ...head(n), ...r });
    return out;
  }
  return nodes.filter((n) => n.metrics).map((n) => ({ node: n.id, ...head(n), ...n.metrics }));
}

/** A Vega-Lite spec rendered headless to SVG text. */
export async function renderSvg(spec: Record<string, unknown>): Promise<string> {
  // Loaded on first use: most commands never draw.
  const [vega, vl] = await Promise.all([import('vega'), import('vega-lite')]);
  const compiled = vl.compile(spec as unknown as Parameters<typeof vl.compile>[0]).spec;
  const view = new vega.View(vega.parse(compiled), { renderer: 'none' });
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}

/** Every figure's Vega-Lite spec, for the figures that have rows to draw (the HTML report embeds them). */
export async function figureSpecs(
  plan: Plan,
  metrics: Map<string, NodeMetrics>,
): Promise<Record<string, Record<string, unknown>>> {
  const out: Record<string, Record<string, unknown>> = {};
  for (const [name, def] of Object.entries(plan.experiment.figures)) {
    const rows = await figureRows(plan, metrics, def);
    if (rows.length) out[name] = specOf(def, rows);
  }
  return out;
}

/** Renders every figure; returns name → SVG path (or why it was skipped). */
export async function buildFigures(
  plan: Plan,
  metrics?: Map<string, NodeMetrics>,
): Promise<Record<string, { path?: string; skipped?: string }>> {
  const defs = plan.experiment.figures;
  const out: Record<string, { path?: string; skipped?: string }> = {};
  if (!Object.keys(defs).length) return out;
  metrics ??= await currentMetrics(plan);
  const dir = join(dirname(plan.experiment.file), 'reports', plan.experiment.name);
  for (const [name, def] of Object.entries(defs)) {
    const rows = await figureRows(plan, metrics, def);
    if (!rows.length) {
      out[name] = { skipped: `no finished nodes of "${def.from}" to draw from` };
      continue;
    }
    const spec = specOf(def, rows);
    const path = join(dir, `${name}.svg`);
    // The spec holds the rows, so its hash covers spec and data alike.
    const inputs = sha256(canonicalJson({ spec, drawn_by: VERSION }));
    if (!(await upToDate(path, inputs))) {
      const svg = await renderSvg(spec);
      await mkdir(dir, { recursive: true });
      await writeFileAtomic(path, svg);
      await writeFileAtomic(stampPath(path), JSON.stringify({ inputs, svg: sha256(svg) }) + '\n');
    }
    out[name] = { path };
  }
  return out;
}

/**
 * Beside each figure, what it was drawn from and what was written: drawing
 * (loading vega, laying out, rendering) costs far more than the run of an
 * all-cached experiment, so an unchanged figure is left as it is.
 */
const stampPath = (svgPath: string) => `${svgPath}.inputs.json`;

/** Whether the SVG at `path` was drawn from `inputs` and has not been changed or removed since. */
async function upToDate(path: string, inputs: string): Promise<boolean> {
  try {
    const stamp = await readJson<{ inputs?: unknown; svg?: unknown }>(stampPath(path), isObject);
    return stamp.inputs === inputs && stamp.svg === sha256(await readFile(path, 'utf8'));
  } catch {
    return false;
  }
}
