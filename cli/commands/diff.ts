import { displayPath } from '../../pipelines/config/load.js';
import { diffPlans, type DiffResult } from '../../pipelines/diff.js';
import { formatValue, renderMarkdown, renderText, type Table } from '../../pipelines/report/tables.js';
import type { IO } from '../io.js';
import { planFor } from './plan.js';

export interface DiffArgs {
  format?: 'text' | 'md' | 'json';
  set?: string[];
}

const show = (v: unknown) => (v === undefined ? '(absent)' : typeof v === 'string' ? v : JSON.stringify(v));
// A written value on one line, its origin beside it: `3 → 5`, `e.yaml:2:12 → -S vars.n=5`.
const arrow = (a: string | undefined, b: string | undefined) => `${a ?? '-'} → ${b ?? '-'}`;

export async function diffCommand(a: string, b: string, args: DiffArgs, io: IO): Promise<number> {
  const [pa, pb] = [await planFor(a, {}, io), await planFor(b, { set: args.set }, io)];
  const d = await diffPlans(pa, pb);
  d.a = displayPath(d.a);
  d.b = displayPath(d.b);
  if (args.format === 'json') {
    io.out(JSON.stringify(d, null, 2));
    return 0;
  }
  io.out(render(d, args.format === 'md' ? renderMarkdown : renderText, args.format === 'md'));
  return 0;
}

function render(d: DiffResult, table: (t: Table) => string, md: boolean): string {
  const h = (s: string) => (md ? `### ${s}` : s);
  const out: string[] = [md ? `## ${d.a} vs ${d.b}` : `${d.a} → ${d.b}`];
  out.push('', h(`written (${d.written.length} differ)`));
  out.push(
    d.written.length
      ? table({
          columns: ['path', 'change', 'written at'],
          rows: d.written.map((w) => ({
            path: w.path,
            change: arrow(show(w.a), show(w.b)),
            'written at': arrow(w.at.a, w.at.b),
          })),
        })
      : '(none)',
  );
  out.push('', h(`resolved parameters (${d.params.length} differ)`));
  out.push(
    d.params.length
      ? table({
          columns: ['path', 'a', 'b'],
          rows: d.params.map((p) => ({ path: p.path, a: show(p.a), b: show(p.b) })),
        })
      : '(none)',
  );
  const touched = d.nodes.filter((n) => n.status !== 'same');
  out.push('', h(`nodes (${touched.length} of ${d.nodes.length} affected)`));
  out.push(table({ columns: ['node', 'status'], rows: d.nodes.map((n) => ({ node: n.id, status: n.status })) }));
  out.push('', h('metrics'));
  out.push(
    d.metrics.length
      ? table({
          columns: ['node', 'metric', 'a', 'b', 'delta'],
          rows: d.metrics.map((m) => ({
            node: m.node,
            metric: m.metric,
            a: m.a,
            b: m.b,
            delta: m.delta === null ? null : formatValue(m.delta),
          })),
        })
      : '(no metrics yet: run the experiments first)',
  );
  return out.join('\n');
}
