// The experiment's `figures:` drawn as SVG with Vega-Lite (rendered
// headless, no browser or canvas), into reports/<experiment>/ beside the
// experiment file. Rows come from the same sources as tables.
import { mkdir, readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { writeFileAtomic } from '../../core/fs.js';
import { canonicalJson, sha256 } from '../../core/hash.js';
import { VERSION } from '../../core/version.js';
import type { ResolvedFigure } from '../config/types.js';
import type { Plan } from '../plan.js';
import { currentMetrics, type NodeMetrics } from './metrics.js';
import { breakdownRows, sourceNodes, type Row } from './tables.js';

/** Rows for a figure: a breakdown, or one row per node (its metrics and matrix values). */
async function figureRows(plan: Plan, metrics: Map<string, NodeMetrics>, def: ResolvedFigure): Promise<Row[]> {
  const nodes = sourceNodes(plan, metrics, def.from);
  const matrix = (n: NodeMetrics) =>
    Object.fromEntries(Object.entries(n.variant).map(([k, v]) => [k.split('.').pop()!, v as Row[string]]));
  if (def.rows !== 'variant' && def.rows !== 'node') {
    const out: Row[] = [];
    for (const n of nodes)
      for (const r of (await breakdownRows([n], def.rows)).rows) out.push({ ...matrix(n), variant: n.id, ...r });
    return out;
  }
  return nodes.filter((n) => n.metrics).map((n) => ({ node: n.id, variant: n.id, ...matrix(n), ...n.metrics }));
}

/** Vega-Lite field names treat dots and brackets as paths. */
const field = (name: string) => name.replace(/([.[\]])/g, '\\$1');

/** A field's distinct values in the order the table lists them: Vega-Lite would sort them alphabetically. */
const tableOrder = (values: unknown[]) => [...new Set(values.filter((v) => v !== null && v !== undefined).map(String))];

/** Error bars and their caps are drawn in this colour so that a cap inside a bar of the series colour shows. */
const INTERVAL_COLOR = '#222222';

/** The Vega-Lite spec of one figure. */
export function figureSpec(def: ResolvedFigure, rows: Row[]): Record<string, unknown> {
  const numeric = (c: string) => rows.length > 0 && rows.every((r) => typeof r[c] === 'number' || r[c] === null);
  const title = def.title ?? `${def.y} by ${def.x}`;
  const base = {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title,
    width: 420,
    height: 260,
    background: 'white',
  };
  const nominal = (name: string, extra: Record<string, unknown> = {}) => ({
    field: field(name),
    type: 'nominal',
    sort: tableOrder(rows.map((r) => r[name])),
    ...extra,
  });
  const color = def.color ? { color: nominal(def.color) } : {};
  const yScale = def.logY ? { scale: { type: 'log' } } : {};
  if (def.kind === 'heatmap') {
    // Wide rows (one column per opponent) folded into cells. A policy against itself has no value: its
    // cell stays empty and is labelled with a dash, as in the table.
    const label = def.y;
    const cols = [...new Set(rows.flatMap((r) => Object.keys(r)))].filter(
      (c) => c !== label && c !== 'variant' && c !== 'overall' && rows.some((r) => typeof r[c] === 'number'),
    );
    const values = rows.flatMap((r) => cols.map((c) => ({ row: r[label], column: c, value: r[c] ?? null })));
    const x = { field: 'column', type: 'nominal', sort: cols };
    const y = { field: 'row', type: 'nominal', sort: tableOrder(rows.map((r) => r[label])) };
    // Dark cells get white text.
    const numbers = values.map((v) => v.value).filter((v): v is number => typeof v === 'number');
    const mid = (Math.min(...numbers) + Math.max(...numbers)) / 2;
    return {
      ...base,
      data: { values },
      layer: [
        {
          mark: 'rect',
          transform: [{ filter: 'isValid(datum.value)' }],
          encoding: {
            x: { ...x, title: def.x },
            y: { ...y, title: label },
            color: { field: 'value', type: 'quantitative', scale: { scheme: 'blues' } },
          },
        },
        {
          mark: { type: 'text', fontSize: 11 },
          transform: [{ calculate: "isValid(datum.value) ? format(datum.value, '.1f') : '—'", as: 'label' }],
          encoding: {
            x,
            y,
            text: { field: 'label', type: 'nominal' },
            color: { condition: { test: `datum.value > ${mid}`, value: 'white' }, value: 'black' },
          },
        },
      ],
    };
  }
  const x =
    def.kind === 'line' || (def.kind === 'point' && numeric(def.x))
      ? { field: field(def.x), type: 'quantitative', title: def.x }
      : nominal(def.x, { title: def.x });
  const y = { field: field(def.y), type: 'quantitative', title: def.y, ...yScale };
  if (def.kind === 'box')
    return { ...base, data: { values: rows }, mark: { type: 'boxplot', extent: 1.5 }, encoding: { x, y, ...color } };
  const layers: Record<string, unknown>[] = [];
  const offset = def.kind === 'bar' && def.color ? { xOffset: nominal(def.color) } : {};
  if (def.kind === 'bar') layers.push({ mark: 'bar', encoding: { x, y, ...color, ...offset } });
  if (def.kind === 'line') layers.push({ mark: { type: 'line', point: true }, encoding: { x, y, ...color } });
  if (def.kind === 'point') layers.push({ mark: { type: 'point', filled: true }, encoding: { x, y, ...color } });
  const hasInterval =
    def.interval && rows.some((r) => typeof r[`${def.y}_lo`] === 'number' && typeof r[`${def.y}_hi`] === 'number');
  if (hasInterval) {
    // Over bars, the interval is drawn in a contrasting colour (the lower cap sits inside the bar);
    // over lines and points it keeps its series' colour.
    const mark =
      def.kind === 'bar' ? { type: 'errorbar', ticks: true, color: INTERVAL_COLOR } : { type: 'errorbar', ticks: true };
    layers.push({
      mark,
      encoding: {
        x,
        y: { field: field(`${def.y}_lo`), type: 'quantitative', title: def.y },
        y2: { field: field(`${def.y}_hi`) },
        ...offset,
        ...(def.kind === 'bar' ? {} : color),
      },
    });
  }
  return { ...base, data: { values: rows }, layer: layers };
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
    if (rows.length) out[name] = figureSpec(def, rows);
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
    const spec = figureSpec(def, rows);
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
    const stamp = JSON.parse(await readFile(stampPath(path), 'utf8')) as { inputs?: unknown; svg?: unknown };
    return stamp.inputs === inputs && stamp.svg === sha256(await readFile(path, 'utf8'));
  } catch {
    return false;
  }
}
