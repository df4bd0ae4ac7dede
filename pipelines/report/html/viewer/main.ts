// The report page's entry: reads the data inlined in the page and builds its sections.
// Bundled with Vega, Vega-Lite, vega-embed and highlight.js into one script at build time.
import 'highlight.js/styles/github.min.css';
import './page.css';
import embed from 'vega-embed';
import type { HtmlTable, PageData } from '../data.js';
import { $, h } from './dom.js';
import { trajectoryBrowser } from './browser.js';
import { curveSpec } from './curves.js';

function table(t: HtmlTable): HTMLElement {
  const grid = (columns: string[], rows: string[][], cls: string) =>
    h(
      'table',
      { class: cls },
      h('thead', {}, h('tr', {}, ...columns.map((c) => h('th', {}, c)))),
      h('tbody', {}, ...rows.map((r) => h('tr', {}, ...r.map((c) => h('td', {}, c))))),
    );
  return h(
    'div',
    { class: 'table', 'data-table': t.name },
    h('h3', {}, t.name),
    t.description ? h('p', { class: 'desc' }, t.description) : null,
    grid(t.columns, t.rows, 'data'),
    t.reference
      ? h(
          'div',
          { class: 'reference' },
          h('p', {}, `paper — ${t.reference.source}`),
          t.reference.notes.length
            ? h('ul', { class: 'notes' }, ...t.reference.notes.map((n) => h('li', {}, n)))
            : null,
        )
      : null,
  );
}

const OPTS = { actions: { export: true, source: true, compiled: false, editor: false }, renderer: 'svg' as const };

function chart(name: string, spec: Record<string, unknown>): HTMLElement {
  const el = h('div', { class: 'vega', 'data-figure': name });
  void embed(el, spec as never, OPTS).catch((err: unknown) =>
    el.replaceChildren(h('p', { class: 'bad' }, String(err))),
  );
  return el;
}

function funnel(data: PageData): HTMLElement | null {
  if (!data.funnel.length) return null;
  return h(
    'section',
    { id: 'funnel' },
    h('h2', {}, 'Task funnel'),
    ...data.funnel.map((f) => {
      const top = Math.max(1, ...f.steps.map((s) => s.count));
      return h(
        'div',
        { class: 'funnel', 'data-node': f.node },
        h('h3', {}, f.node),
        ...f.steps.map((s) =>
          h(
            'div',
            { class: 'funnel-step' },
            h('span', { class: 'funnel-name' }, s.name),
            h('span', { class: 'funnel-bar', style: `width:${(60 * s.count) / top}%` }),
            h('span', { class: 'funnel-count' }, s.count),
          ),
        ),
      );
    }),
  );
}

function section(id: string, title: string, ...children: (HTMLElement | null)[]): HTMLElement | null {
  return children.some(Boolean) ? h('section', { id }, h('h2', {}, title), ...children) : null;
}

function boot(): void {
  const data = JSON.parse($('#mlepipe-data').textContent!) as PageData;
  const app = $('#app');
  const curves = (['grpo', 'sft'] as const).map((kind) => {
    const spec = curveSpec(
      kind,
      data.curves.filter((c) => c.kind === kind),
    );
    return spec
      ? h(
          'div',
          { class: 'curves', 'data-kind': kind },
          h('h3', {}, kind === 'grpo' ? 'GRPO' : 'SFT'),
          chart(`curves-${kind}`, spec),
        )
      : null;
  });
  const sections = [
    section('tables', 'Tables', ...data.tables.map(table)),
    section(
      'figures',
      'Figures',
      ...data.figures.map((f) => h('div', { class: 'figure' }, h('h3', {}, f.name), chart(f.name, f.spec))),
    ),
    funnel(data),
    section('curves', 'Training curves', ...curves),
    h(
      'section',
      { id: 'trajectories' },
      h('h2', {}, 'Trajectories'),
      data.index.length ? trajectoryBrowser(data) : h('p', { class: 'hint' }, 'No trajectories recorded.'),
    ),
  ].filter((s): s is HTMLElement => s !== null);
  const nav = h('nav', {}, ...sections.map((s) => h('a', { href: `#${s.id}` }, s.querySelector('h2')!.textContent)));
  app.replaceChildren(
    h(
      'header',
      {},
      h('h1', {}, data.experiment.name),
      data.experiment.description ? h('p', {}, data.experiment.description) : null,
      h('p', { class: 'generated' }, `generated ${data.generated}`),
      nav,
    ),
    ...sections,
  );
  document.body.dataset.ready = '1';
}

boot();
