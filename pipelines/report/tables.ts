// The experiment's `tables:` rendered from node metrics (DESIGN §2).
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { AblateTable } from '../../stages/ablate/index.js';
import { variantLabel } from '../../stages/ablate/index.js';
import type { MetricValue } from '../../stages/contract.js';
import type { Plan } from '../plan.js';
import { currentMetrics } from './metrics.js';

export interface Table {
  columns: string[];
  rows: Array<Record<string, MetricValue>>;
}

export async function buildTables(plan: Plan): Promise<Record<string, Table>> {
  const metrics = await currentMetrics(plan);
  const exp = plan.experiment;
  const defs = Object.keys(exp.tables).length ? exp.tables : { nodes: { from: '', rows: 'node' as const, columns: undefined } };
  const tables: Record<string, Table> = {};
  for (const [name, def] of Object.entries(defs)) {
    const nodes = [...metrics.values()].filter((m) => !def.from || m.stage === def.from);
    const stage = exp.stages.find((s) => s.id === def.from);
    if (stage?.uses === 'ablate' && nodes[0]?.dir) {
      // An ablate node already holds its comparison table.
      const t = JSON.parse(await readFile(join(nodes[0].dir, 'table.json'), 'utf8')) as AblateTable;
      const columns = def.columns ? ['variant', ...def.columns] : t.columns;
      tables[name] = { columns, rows: t.rows.map((r) => pick(r, columns)) };
      continue;
    }
    const metricNames = def.columns ?? [...new Set(nodes.flatMap((n) => Object.keys(n.metrics ?? {})))];
    const label = def.rows === 'node' || !nodes.some((n) => Object.keys(n.variant).length) ? 'node' : 'variant';
    const columns = [label, ...metricNames];
    const rows = nodes.map((n) => {
      const row: Record<string, MetricValue> = { [label]: label === 'node' ? n.id : variantLabel(n.variant) || n.id };
      for (const m of metricNames) row[m] = n.metrics ? (n.metrics[m] ?? null) : null;
      return row;
    });
    tables[name] = { columns, rows };
  }
  return tables;
}

function pick(row: Record<string, MetricValue>, columns: string[]): Record<string, MetricValue> {
  return Object.fromEntries(columns.map((c) => [c, row[c] ?? null]));
}

export function formatValue(v: MetricValue | undefined): string {
  if (v === null || v === undefined) return '—';
  if (typeof v === 'number') return Number.isInteger(v) ? String(v) : String(Number(v.toPrecision(4)));
  return String(v);
}

export function renderText(t: Table): string {
  const cells = [t.columns, ...t.rows.map((r) => t.columns.map((c) => formatValue(r[c])))];
  const widths = t.columns.map((_, i) => Math.max(...cells.map((row) => row[i].length)));
  return cells.map((row) => row.map((c, i) => c.padEnd(widths[i])).join('  ').trimEnd()).join('\n');
}

export function renderMarkdown(t: Table): string {
  const esc = (s: string) => s.replace(/\|/g, '\\|');
  const lines = [`| ${t.columns.map(esc).join(' | ')} |`, `|${t.columns.map(() => ' --- ').join('|')}|`];
  for (const r of t.rows) lines.push(`| ${t.columns.map((c) => esc(formatValue(r[c]))).join(' | ')} |`);
  return lines.join('\n');
}

export function renderCsv(t: Table): string {
  const q = (s: string) => (/[",\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s);
  const lines = [t.columns.map(q).join(',')];
  for (const r of t.rows) lines.push(t.columns.map((c) => q(r[c] === null || r[c] === undefined ? '' : String(r[c]))).join(','));
  return lines.join('\n');
}
