import { buildFigures } from '../../pipelines/report/figures.js';
import { currentMetrics } from '../../pipelines/report/metrics.js';
import { buildTables, renderCsv, renderMarkdown, renderText, tableJson } from '../../pipelines/report/tables.js';
import type { Plan } from '../../pipelines/plan.js';
import { dirname, join, resolve } from 'node:path';
import { UserError } from '../../core/errors.js';
import { displayPath } from '../../core/paths.js';
import type { IO } from '../io.js';
import { planFor, type PlanArgs } from './plan.js';

export interface ReportArgs extends PlanArgs {
  format?: 'text' | 'md' | 'csv' | 'json';
  /** Write the HTML report instead: into `out`, by default reports/<experiment>/html/ beside the experiment file. */
  html?: boolean;
  out?: string;
}

export async function reportCommand(file: string, args: ReportArgs, io: IO): Promise<number> {
  if (args.out !== undefined && !args.html)
    throw new UserError('--out is the folder of the HTML report: use it with --html');
  const plan = await planFor(file, args, io);
  const stale = plan.nodes.filter((p) => p.action === 'run' || p.action === 'rescore').length;
  if (stale) io.err(`note: ${stale} node(s) have not run with their current parameters; their cells are empty`);
  if (args.html) return writeHtml(plan, args.out, io);
  await printReport(plan, args.format ?? 'text', io);
  return 0;
}

async function writeHtml(plan: Plan, out: string | undefined, io: IO): Promise<number> {
  const { writeHtmlReport } = await import('../../pipelines/report/html/page.js');
  const metrics = await currentMetrics(plan);
  const tables = await buildTables(plan, metrics);
  const dir = out ? resolve(out) : join(dirname(plan.experiment.file), 'reports', plan.experiment.name, 'html');
  const { page, trajectories } = await writeHtmlReport(plan, metrics, tables, dir);
  io.out(displayPath(page));
  io.err(`report: ${Object.keys(tables).length} table(s), ${trajectories} trajectories`);
  return 0;
}

/** Tables on stdout in the chosen format; figures written as SVG (their paths on stderr, or in the JSON). */
export async function printReport(plan: Plan, format: 'text' | 'md' | 'csv' | 'json', io: IO): Promise<void> {
  // Read every node's manifest once for both.
  const metrics = await currentMetrics(plan);
  const tables = await buildTables(plan, metrics);
  const figures = await buildFigures(plan, metrics);
  if (format === 'json') {
    const figs = Object.fromEntries(Object.entries(figures).map(([k, f]) => [k, f.path ?? null]));
    io.out(
      JSON.stringify(
        { tables: Object.fromEntries(Object.entries(tables).map(([k, t]) => [k, tableJson(t)])), figures: figs },
        null,
        2,
      ),
    );
    return;
  }
  const parts: string[] = [];
  for (const [name, t] of Object.entries(tables)) {
    if (format === 'csv') parts.push(Object.keys(tables).length > 1 ? `# ${name}\n${renderCsv(t)}` : renderCsv(t));
    else if (format === 'md')
      parts.push(`### ${name}\n\n${t.description ? `${t.description}\n\n` : ''}${renderMarkdown(t)}`);
    else parts.push(`${name}${t.description ? ` — ${t.description}` : ''}\n${renderText(t)}`);
  }
  io.out(parts.join('\n\n'));
  for (const [name, f] of Object.entries(figures))
    io.err(f.path ? `figure ${name}: ${displayPath(f.path)}` : `figure ${name}: skipped (${f.skipped})`);
}
