import { buildTables, renderCsv, renderMarkdown, renderText } from '../../pipelines/report/tables.js';
import type { IO } from '../io.js';
import { planFor, type PlanArgs } from './plan.js';

export interface ReportArgs extends PlanArgs {
  format?: 'text' | 'md' | 'csv' | 'json';
}

export async function reportCommand(file: string, args: ReportArgs, io: IO): Promise<number> {
  const plan = await planFor(file, args, io);
  const tables = await buildTables(plan);
  const stale = plan.nodes.filter((p) => p.action === 'run').length;
  if (stale) io.err(`note: ${stale} node(s) have not run with their current parameters; their cells are empty`);
  const format = args.format ?? 'text';
  if (format === 'json') {
    io.out(JSON.stringify({ tables }, null, 2));
    return 0;
  }
  const parts: string[] = [];
  for (const [name, t] of Object.entries(tables)) {
    if (format === 'csv') parts.push(Object.keys(tables).length > 1 ? `# ${name}\n${renderCsv(t)}` : renderCsv(t));
    else if (format === 'md') parts.push(`### ${name}\n\n${renderMarkdown(t)}`);
    else parts.push(`${name}\n${renderText(t)}`);
  }
  io.out(parts.join('\n\n'));
  return 0;
}
