// The Vega-Lite spec of one figure of the experiment's `figures:`, from its rows: a heatmap of wide rows, or
// bars, lines, points or boxes with their intervals. The rows are inlined, so the spec alone draws the figure.
import type { ResolvedFigure } from '../config/types.js';
import type { Row } from './tables.js';

/** Vega-Lite field names treat dots and brackets as paths. */
const field = (name: string) => name.replace(/([.[\]])/g, '\\$1');

/** A field's distinct values in the order the table lists them: Vega-Lite would sort them alphabetically. */
const tableOrder = (values: unknown[]) => [...new Set(values.filter((v) => v !== null && v !== undefined).map(String))];

/** Error bars and their caps are drawn in this colour so that a cap inside a bar of the series colour shows. */
const INTERVAL_COLOR = '#222222';

type Spec = Record<string, unknown>;

/** How the paper's points are drawn: one mark, one legend entry "paper". */
const PAPER_MARK = { type: 'point', shape: 'diamond', filled: true, size: 110, color: '#d62728', opacity: 0.9 };

/** The Vega-Lite spec of one figure; `paper`: the paper's points, drawn over ours on the same axes. */
export function figureSpec(def: ResolvedFigure, rows: Row[], paper: Row[] = []): Spec {
  const base = {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: def.title ?? `${def.y} by ${def.x}`,
    width: 420,
    height: 260,
    background: 'white',
  };
  if (def.kind === 'heatmap') return { ...base, ...heatmap(def, rows) };
  const numeric = (c: string) => rows.length > 0 && rows.every((r) => typeof r[c] === 'number' || r[c] === null);
  const nominal = (name: string, extra: Spec = {}) => ({
    field: field(name),
    type: 'nominal',
    sort: tableOrder(rows.map((r) => r[name])),
    ...extra,
  });
  const color = def.color ? { color: nominal(def.color) } : {};
  const yScale = def.logY ? { scale: { type: 'log' } } : {};
  const all = [...rows, ...paper];
  const x =
    def.kind === 'line' || (def.kind === 'point' && numeric(def.x))
      ? { field: field(def.x), type: 'quantitative', title: def.x, ...integerAxis(all, def.x) }
      : nominal(def.x, { title: def.x });
  const y = { field: field(def.y), type: 'quantitative', title: def.y, ...yScale, ...integerAxis(all, def.y) };
  if (def.kind === 'box')
    return { ...base, data: { values: rows }, mark: { type: 'boxplot', extent: 1.5 }, encoding: { x, y, ...color } };
  const layers: Spec[] = [];
  const offset = def.kind === 'bar' && def.color ? { xOffset: nominal(def.color) } : {};
  if (def.kind === 'bar') layers.push({ mark: 'bar', encoding: { x, y, ...color, ...offset } });
  if (def.kind === 'line') {
    const lines = splitLines(def, rows)
      ? { [def.color ? 'detail' : 'color']: nominal('series', { title: 'variant' }) }
      : {};
    layers.push({ mark: { type: 'line', point: true }, encoding: { x, y, ...color, ...lines } });
  }
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
  if (paper.length)
    layers.push({
      data: { values: paper },
      mark: PAPER_MARK,
      encoding: {
        x,
        y,
        ...offset,
        // A shape channel with one value gives the layer its legend entry.
        shape: { field: 'source', type: 'nominal', title: null, scale: { domain: ['paper'], range: ['diamond'] } },
      },
    });
  return { ...base, data: { values: rows }, layer: layers };
}

/**
 * Whether a line figure draws one line per variant: its rows come from variants that share x values (an
 * ablated stage's curves by step), which joined into one line would jump between the arms at every x.
 * Where x, or x and color, is all the variants differ in, one line runs across them, as it should.
 */
function splitLines(def: ResolvedFigure, rows: Row[]): boolean {
  if (!def.split) return false;
  const series = new Set(rows.map((r) => r.series ?? ''));
  if (series.size < 2) return false;
  const seen = new Map<string, unknown>();
  for (const r of rows) {
    const at = JSON.stringify([def.color ? r[def.color] : null, r[def.x]]);
    if (seen.has(at) && seen.get(at) !== r.series) return true;
    seen.set(at, r.series);
  }
  return false;
}

/** A quantitative axis over whole numbers only (steps, turns, counts) gets ticks at whole numbers. */
function integerAxis(rows: Row[], name: string): Spec {
  const values = rows.map((r) => r[name]).filter((v) => v !== null && v !== undefined);
  return values.length && values.every((v) => Number.isInteger(v)) ? { axis: { tickMinStep: 1 } } : {};
}

/**
 * Wide rows (one column per opponent) folded into cells. A policy against itself has no value: its
 * cell stays empty and is labelled with a dash, as in the table.
 */
function heatmap(def: ResolvedFigure, rows: Row[]): Spec {
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
