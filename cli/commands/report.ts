import { buildFigures } from '../../pipelines/report/figures.js';
import { currentMetrics } from '../../pipelines/report/metrics.js';
import {
  buildTables,
  renderCsv,
  renderMarkdown,
  renderText,
  tableJson,
  type Table,
} from '../../pipelines/report/tables.js';
import type { Plan } from '../../pipelines/plan.js';
import { mkdir } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { UserError } from '../../core/errors.js';
import { writeFileAtomic } from '../../core/fs.js';
import { displayPath } from '../../core/paths.js';
import { suggestion } from '../../core/suggest.js';
import type { IO } from '../io.js';
import { planFor, type PlanArgs } from './plan.js';

export type ReportFormat = 'text' | 'md' | 'csv' | 'json';

export interface ReportArgs extends PlanArgs {
  format?: ReportFormat;
  /** Write the HTML report instead: into `out`, by default reports/<experiment>/html/ beside the experiment file. */
  html?: boolean;
  /** The folder of the HTML report, or of the CSV files (one per table). */
  out?: string;
  /** Only this table. */
  table?: string;
}

/** What a report prints beyond its format: one table only, or CSV files into a folder instead of stdout. */
export interface PrintOptions {
  table?: string;
  out?: string;
}

export async function reportCommand(file: string, args: ReportArgs, io: IO): Promise<number> {
  if (args.out !== undefined && !args.html && args.format !== 'csv')
    throw new UserError('--out is the folder the HTML report or the CSV files go into: use it with --html or --csv');
  if (args.table !== undefined && args.html)
    throw new UserError('--table picks the table to print; the HTML report shows them all: leave out one of the two');
  const plan = await planFor(file, args, io);
  const stale = plan.nodes.filter((p) => p.action === 'run' || p.action === 'rescore').length;
  if (stale) io.err(`note: ${stale} node(s) have not run with their current parameters; their cells are empty`);
  if (args.html) return writeHtml(plan, args.out, io);
  await printReport(plan, args.format ?? 'text', io, { table: args.table, out: args.out });
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

/** The tables a report prints: all of them, or the one `--table` names. */
function chosenTables(tables: Record<string, Table>, name: string | undefined): Record<string, Table> {
  if (name === undefined) return tables;
  const names = Object.keys(tables);
  if (!(name in tables))
    throw new UserError(`--table ${name}: no such table${suggestion(name, names)} (the tables: ${names.join(', ')})`);
  return { [name]: tables[name] };
}

/**
 * Tables on stdout in the chosen format; figures written as SVG (their paths on stderr, or in the JSON).
 * A CSV file holds one table: several go into a folder (`out`), one file each, or one is picked.
 */
export async function printReport(plan: Plan, format: ReportFormat, io: IO, opts: PrintOptions = {}): Promise<void> {
  // Read every node's manifest once for both.
  const metrics = await currentMetrics(plan);
  const tables = chosenTables(await buildTables(plan, metrics), opts.table);
  if (format === 'csv' && opts.out === undefined && Object.keys(tables).length > 1)
    throw new UserError(
      `--csv: a CSV file holds one table, and this report has ${Object.keys(tables).length} ` +
        `(${Object.keys(tables).join(', ')}): write one file each into a folder with --out DIR, ` +
        'or print one with --table NAME',
    );
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
  if (format === 'csv' && opts.out !== undefined)
    for (const path of await writeCsvFiles(tables, opts.out)) io.out(path);
  else
    io.out(
      Object.entries(tables)
        .map(([name, t]) => rendered(name, t, format))
        .join('\n\n'),
    );
  for (const [name, f] of Object.entries(figures))
    io.err(f.path ? `figure ${name}: ${displayPath(f.path)}` : `figure ${name}: skipped (${f.skipped})`);
}

/** One table as printed in a text, Markdown or (a single table's) CSV report. */
function rendered(name: string, t: Table, format: Exclude<ReportFormat, 'json'>): string {
  if (format === 'csv') return renderCsv(t);
  if (format === 'md') return `### ${name}\n\n${t.description ? `${t.description}\n\n` : ''}${renderMarkdown(t)}`;
  return `${name}${t.description ? ` — ${t.description}` : ''}\n${renderText(t)}`;
}

/** A table's file name: its name, with what a file name should not hold replaced. */
const csvName = (table: string) => `${table.replace(/[^A-Za-z0-9._-]/g, '_').replace(/^\.+/, '_')}.csv`;

/** Writes NAME.csv per table into `dir` (created); returns the paths as shown to the user. */
async function writeCsvFiles(tables: Record<string, Table>, dir: string): Promise<string[]> {
  const files = new Map<string, string>();
  for (const name of Object.keys(tables)) {
    const file = csvName(name);
    const other = files.get(file);
    if (other !== undefined)
      throw new UserError(`--csv: the tables "${other}" and "${name}" would both be written to ${file}: rename one`);
    files.set(file, name);
  }
  await mkdir(resolve(dir), { recursive: true });
  const paths: string[] = [];
  for (const [file, name] of files) {
    const path = join(resolve(dir), file);
    await writeFileAtomic(path, `${renderCsv(tables[name])}\n`);
    paths.push(displayPath(path));
  }
  return paths;
}
