// `mlepipe report --html`: one page, index.html, with its script, styles and
// data inlined (it opens from disk with no network), and beside it one small
// script per trajectory under trajectories/<bucket>/, loaded when opened.
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { assetPath } from '../../../core/assets.js';
import { formatJson } from '../../../core/json-files.js';
import type { Plan } from '../../plan.js';
import type { NodeMetrics } from '../metrics.js';
import type { Table } from '../tables.js';
import { pageData, type PageData, type Recorded } from './data.js';

/** JSON that can sit inside a <script> element: no `</script>` or `<!--` can end or confuse it. */
const scriptSafe = (json: string) =>
  json
    .replace(/</g, '\\u003c')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');

const escapeHtml = (s: string) =>
  s.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!);

/** The page around its data. */
export async function pageHtml(data: PageData): Promise<string> {
  const [js, css] = await Promise.all([
    readFile(assetPath('dist/report/viewer.js'), 'utf8'),
    readFile(assetPath('dist/report/viewer.css'), 'utf8'),
  ]);
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(data.experiment.name)} — mlepipe report</title>
<style>${css.replace(/<\/style/gi, '<\\/style')}</style>
<noscript><style>.needs-script { display: none; }</style></noscript>
</head>
<body>
<div id="app">
<noscript><p class="no-script">This report needs JavaScript: its tables, figures and trajectories are drawn by the script inside
the page, which runs offline. Open it in a browser with JavaScript turned on.</p></noscript>
<p class="needs-script">Loading…</p>
</div>
<script type="application/json" id="mlepipe-data">${scriptSafe(JSON.stringify(data))}</script>
<script>${js.replace(/<\/script/gi, '<\\/script')}</script>
</body>
</html>
`;
}

/** Writes trajectory i beside the page (the folder emptied first, on creation). */
export async function trajectoryWriter(dir: string): Promise<(i: number, t: Recorded) => Promise<void>> {
  const trajDir = join(dir, 'trajectories');
  await rm(trajDir, { recursive: true, force: true });
  const made = new Set<number>();
  return async (i, t) => {
    // Buckets of 1,000 keep every folder small.
    const bucket = Math.floor(i / 1000);
    if (!made.has(bucket)) {
      await mkdir(join(trajDir, String(bucket)), { recursive: true });
      made.add(bucket);
    }
    await writeFile(
      join(trajDir, String(bucket), `${i}.js`),
      // A script, not JSON: the bare Infinity and NaN of a score (core/json-files.ts) are JavaScript's own.
      `mlepipeTrajectory(${i},${scriptSafe(formatJson(t))});\n`,
    );
  };
}

/** Writes the page and its trajectories into `dir`; returns the page's path. */
export async function writeHtmlReport(
  plan: Plan,
  metrics: Map<string, NodeMetrics>,
  tables: Record<string, Table>,
  dir: string,
): Promise<{ page: string; trajectories: number }> {
  const data = await pageData(plan, metrics, tables, await trajectoryWriter(dir));
  await mkdir(dir, { recursive: true });
  const page = join(dir, 'index.html');
  await writeFile(page, await pageHtml(data));
  return { page, trajectories: data.index.length };
}
