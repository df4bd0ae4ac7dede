// The experiment's `tables:` rendered from node metrics (docs/experiments.md), or from
// a breakdown the stage publishes in rows.json (an eval node's rows by
// policy, task, win rate, latency), with published numbers beside them.
import { existsSync } from 'node:fs';
import { readJson } from '../../core/json-files.js';
import { join } from 'node:path';
import type { ResolvedReference, ResolvedTable } from '../config/types.js';
import type { AblateTable } from '../../stages/ablate/index.js';
import { variantLabel } from '../../stages/ablate/index.js';
import type { MetricValue } from '../../stages/contract.js';
import type { Plan } from '../plan.js';
import { currentMetrics, type NodeMetrics } from './metrics.js';
import { COMPARISON_SUFFIXES, compareTable } from './compare.js';
import { referenceColumns, referenceKeys, referenceLabel } from '../../core/references.js';

export type Row = Record<string, MetricValue>;

export interface Table {
  columns: string[];
  rows: Row[];
  /** How cells with `<col>_lo`, `<col>_hi` and `<col>_sem` beside them are printed. */
  interval?: 'ci' | 'sem' | 'none';
  description?: string;
  /** The columns that name a row (variant, node, policy, …): a reference joins on them unless it says `on:`. */
  labels?: string[];
  reference?: ResolvedReference;
  /** With a reference: what joined (the rows carry `<col>_paper`, `<col>_diff`, `<col>_inside`). */
  comparison?: Comparison;
}

export interface Comparison {
  source: string;
  /** Our columns with the paper's values beside them. */
  compared: string[];
  /** Our row key → the paper's row label joined to it. */
  joined: Record<string, string>;
  /** The paper's rows that joined none of ours. */
  paperOnly: string[];
}

const SUFFIXES = ['_lo', '_hi', '_sem', ...COMPARISON_SUFFIXES];
const isCompanion = (k: string, keys: string[]) =>
  SUFFIXES.some((s) => k.endsWith(s) && keys.includes(k.slice(0, -s.length)));

/** The nodes a table or figure draws from: the stage's, or an ablate stage's variants of its target. */
export function sourceNodes(plan: Plan, metrics: Map<string, NodeMetrics>, from: string): NodeMetrics[] {
  const stage = plan.experiment.stages.find((s) => s.id === from);
  const name = stage?.uses === 'ablate' ? (stage.target ?? from) : from;
  return [...metrics.values()].filter((m) => m.stage === name);
}

/** Rows of a breakdown from every node of the stage, with the variant in front when there are several. */
/** A node's rows.json: its breakdowns by name; a node that published none has none. */
async function publishedRows(file: string): Promise<Record<string, Row[]>> {
  if (!existsSync(file)) return {};
  return readJson<Record<string, Row[]>>(file);
}

export async function breakdownRows(
  nodes: NodeMetrics[],
  breakdown: string,
): Promise<{ rows: Row[]; labels: string[] }> {
  const varied = nodes.some((n) => Object.keys(n.variant).length);
  const rows: Row[] = [];
  let labels: string[] = [];
  for (const n of nodes) {
    if (!n.dir || !n.metrics) continue;
    const all = await publishedRows(join(n.dir, 'rows.json'));
    const mine = all[breakdown] ?? [];
    if (mine[0] && !labels.length) labels = Object.keys(mine[0]).filter((k) => typeof mine[0][k] === 'string');
    for (const r of mine) rows.push(varied ? { variant: variantLabel(n.variant) || n.id, ...r } : r);
  }
  return { rows, labels: varied ? ['variant', ...labels] : labels };
}

export async function buildTables(plan: Plan, metrics?: Map<string, NodeMetrics>): Promise<Record<string, Table>> {
  metrics ??= await currentMetrics(plan);
  const exp = plan.experiment;
  const defs: Record<string, ResolvedTable> = Object.keys(exp.tables).length
    ? { ...exp.tables }
    : { nodes: { from: '', rows: 'node', interval: 'ci' } };
  const tables: Record<string, Table> = {};
  for (const [name, def] of Object.entries(defs)) {
    const extra = { interval: def.interval, description: def.description, reference: def.reference };
    const stage = exp.stages.find((s) => s.id === def.from);
    if (def.rows !== 'variant' && def.rows !== 'node') {
      const { rows, labels } = await breakdownRows(sourceNodes(plan, metrics, def.from), def.rows);
      const keys = [...new Set(rows.flatMap((r) => Object.keys(r)))];
      const columns = [...labels, ...(def.columns ?? keys.filter((k) => !labels.includes(k) && !isCompanion(k, keys)))];
      tables[name] = { columns, rows, labels, ...extra };
      continue;
    }
    const nodes = [...metrics.values()].filter((m) => !def.from || m.stage === def.from);
    if (stage?.uses === 'ablate' && nodes[0]?.dir) {
      // An ablate node already holds its comparison table.
      const t = await readJson<AblateTable>(join(nodes[0].dir, 'table.json'));
      const columns = def.columns ? ['variant', ...def.columns] : t.columns;
      tables[name] = { columns, rows: t.rows, labels: ['variant'], ...extra };
      continue;
    }
    const metricNames = def.columns ?? [...new Set(nodes.flatMap((n) => Object.keys(n.metrics ?? {})))];
    const label = def.rows === 'node' || !nodes.some((n) => Object.keys(n.variant).length) ? 'node' : 'variant';
    const rows = nodes.map((n) => {
      const row: Row = { [label]: label === 'node' ? n.id : variantLabel(n.variant) || n.id };
      // Every metric is kept (interval companions included); the columns say what is shown.
      for (const [k, v] of Object.entries(n.metrics ?? {})) row[k] = v;
      for (const m of metricNames) row[m] = n.metrics ? (n.metrics[m] ?? null) : null;
      return row;
    });
    tables[name] = { columns: [label, ...metricNames], rows, labels: [label], ...extra };
  }
  for (const t of Object.values(tables)) if (t.reference) withComparison(t, t.reference);
  return tables;
}

/** Puts the paper's values beside the table's rows it joins. */
export function withComparison(t: Table, ref: ResolvedReference): void {
  const on = [...(ref.on ?? t.labels ?? t.columns.slice(0, 1))];
  const c = compareTable(t.rows, t.columns, on, ref);
  t.rows = c.rows;
  t.comparison = {
    source: ref.table.source,
    compared: c.compared,
    joined: Object.fromEntries([...c.join.byKey].map(([key, row]) => [key, referenceLabel(ref.table, row)])),
    paperOnly: c.join.paperOnly,
  };
}

export function formatValue(v: MetricValue | undefined): string {
  if (v === null || v === undefined) return '—';
  // Short numbers print as written (published figures such as 196.17); long ones to 4 significant digits.
  if (typeof v === 'number')
    return Number.isInteger(v) || String(v).length <= 6 ? String(v) : String(Number(v.toPrecision(4)));
  return String(v);
}

/** A cell with its uncertainty: `42.5 ± 3.1 [30.0, 55.0]`. */
export function formatCell(row: Row, col: string, interval: Table['interval'] = 'ci'): string {
  const v = row[col];
  const base = formatValue(v);
  if (typeof v !== 'number' || interval === 'none') return base;
  const lo = row[`${col}_lo`];
  const hi = row[`${col}_hi`];
  const s = row[`${col}_sem`];
  const sem = typeof s === 'number' && s > 0 ? ` ± ${formatValue(s)}` : '';
  if (interval === 'sem') return base + sem;
  return typeof lo === 'number' && typeof hi === 'number'
    ? `${base}${sem} [${formatValue(lo)}, ${formatValue(hi)}]`
    : base + sem;
}

/** A difference with its sign, and ✓ where the paper's value lies inside our 95% interval. */
function diffCell(row: Row, col: string): string {
  const d = row[`${col}_diff`];
  if (typeof d !== 'number') return row[`${col}_paper`] === undefined ? '' : '—';
  return `${d > 0 ? '+' : ''}${formatValue(d)}${row[`${col}_inside`] === true ? ' ✓' : ''}`;
}

/** The printed table: our columns, each compared one followed by the paper's value and the difference. */
export function tableView(t: Table): { head: string[]; cells: string[][] } {
  const compared = new Set(t.comparison?.compared ?? []);
  const head = t.columns.flatMap((c) => (compared.has(c) ? [c, `${c} (paper)`, `${c} Δ`] : [c]));
  const cells = t.rows.map((r) =>
    t.columns.flatMap((c) => {
      const ours = formatCell(r, c, t.interval);
      if (!compared.has(c)) return [ours];
      const paper = r[`${c}_paper`];
      return [ours, paper === undefined ? '' : formatValue(paper), diffCell(r, c)];
    }),
  );
  return { head, cells };
}

/** The lines beneath a compared table: the source, what ✓ means, the paper's rows not run here. */
export function comparisonNotes(t: Table): string[] {
  const c = t.comparison;
  if (!c) return [];
  const notes = [`paper — ${c.source}`];
  if (!Object.keys(c.joined).length) notes.push('no row of this table joins a row of the paper’s');
  else if (c.compared.length) notes.push('Δ = ours − paper; ✓: the paper’s value lies inside our 95% interval');
  if (c.paperOnly.length) notes.push(`paper only: ${c.paperOnly.join('; ')}`);
  return notes;
}

export function renderText(t: Table): string {
  const { head, cells: body } = tableView(t);
  const cells = [head, ...body];
  const widths = head.map((_, i) => Math.max(...cells.map((row) => row[i].length)));
  const text = cells
    .map((row) =>
      row
        .map((c, i) => c.padEnd(widths[i]))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
  const notes = comparisonNotes(t);
  return notes.length ? `${text}\n\n${notes.join('\n')}` : text;
}

export function renderMarkdown(t: Table): string {
  const esc = (s: string) => s.replace(/\|/g, '\\|');
  const { head, cells } = tableView(t);
  const lines = [`| ${head.map(esc).join(' | ')} |`, `|${head.map(() => ' --- ').join('|')}|`];
  for (const r of cells) lines.push(`| ${r.map(esc).join(' | ')} |`);
  const notes = comparisonNotes(t);
  if (notes.length) lines.push('', ...notes.map((n) => `${n}  `));
  return lines.join('\n');
}

/** CSV keeps the interval companions as columns of their own. */
export function renderCsv(t: Table): string {
  const q = (s: string) => (/[",\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s);
  const columns = t.columns.flatMap((c) => [
    c,
    ...SUFFIXES.map((s) => c + s).filter((k) => t.rows.some((r) => r[k] !== undefined)),
  ]);
  const lines = [columns.map(q).join(',')];
  for (const r of t.rows)
    lines.push(columns.map((c) => q(r[c] === null || r[c] === undefined ? '' : String(r[c]))).join(','));
  return lines.join('\n');
}

/** JSON: the shown columns with their companions, and the reference when declared. */
export function tableJson(t: Table): Record<string, unknown> {
  const keep = (r: Row) =>
    Object.fromEntries(
      Object.entries(r).filter(
        ([k]) =>
          t.columns.includes(k) || SUFFIXES.some((s) => k.endsWith(s) && t.columns.includes(k.slice(0, -s.length))),
      ),
    );
  return {
    columns: t.columns,
    rows: t.rows.map(keep),
    ...(t.description ? { description: t.description } : {}),
    ...(t.reference && t.comparison ? { reference: referenceJson(t.reference, t.comparison) } : {}),
  };
}

/** The reference in JSON: the paper's whole table and what joined. */
function referenceJson(ref: ResolvedReference, c: Comparison): Record<string, unknown> {
  return {
    source: c.source,
    keys: referenceKeys(ref.table),
    columns: referenceColumns(ref.table),
    rows: ref.table.rows,
    compare: ref.compare,
    joined: c.joined,
    paper_only: c.paperOnly,
  };
}
