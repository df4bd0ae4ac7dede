// The trajectory browser: filters over the inlined index, a paged list (the DOM holds one
// page however many episodes there are), and the chosen trajectory loaded on demand, with
// the same episode of every other variant of its stage side by side (detail.ts).
import type { IndexEntry, PageData } from '../data.js';
import { trajectoryDetail } from './detail.js';
import { fmt, h } from './dom.js';
import { filterControls } from './filters.js';

const PAGE = 100;
const COLUMNS = ['task', 'policy', 'repeat', 'variant', 'outcome', 'score', 'reward', 'turns'];
/** The columns of numbers, aligned right. */
const NUMERIC = new Set(['repeat', 'score', 'reward', 'turns']);

export function trajectoryBrowser(data: PageData): HTMLElement {
  const index = data.index;
  let shown = PAGE;
  let matching: IndexEntry[] = index;
  const filters = filterControls(index, () => update());
  const count = h('span', { id: 't-count' });
  const list = h('tbody', { id: 't-list' });
  const more = h('button', { id: 't-more', onclick: () => ((shown += PAGE), draw()) }, 'show more');
  const detail = trajectoryDetail(data, (e) => {
    for (const r of list.querySelectorAll('.selected')) r.classList.remove('selected');
    list.querySelector(`[data-i="${e.i}"]`)?.classList.add('selected');
  });

  function update(): void {
    matching = index.filter(filters.matcher());
    shown = PAGE;
    draw();
  }

  function draw(): void {
    count.textContent = `${matching.length} of ${index.length} trajectories`;
    list.replaceChildren(...matching.slice(0, shown).map((e) => row(e, () => detail.open(e))));
    more.hidden = matching.length <= shown;
  }

  update();
  const head = h('thead', {}, h('tr', {}, ...COLUMNS.map((c) => h('th', NUMERIC.has(c) ? { class: 'num' } : {}, c))));
  const panes = h(
    'div',
    { class: 'browser-panes' },
    h('div', { class: 'list-pane' }, h('table', { class: 'list' }, head, list), more),
    detail.element,
  );
  // Variants side by side take the whole width, the list above them.
  detail.comparing = (on) => panes.classList.toggle('comparing', on);
  return h('div', { class: 'browser' }, h('div', { class: 'browser-top' }, filters.element, count), panes);
}

/** One trajectory's row of the list, in the order of COLUMNS. */
function row(e: IndexEntry, open: () => Promise<void>): HTMLElement {
  return h(
    'tr',
    { class: 't-row', 'data-i': e.i, tabindex: 0, onclick: open },
    h('td', { class: 'wrap task' }, e.task),
    h('td', { class: 'wrap' }, e.policy),
    h('td', { class: 'num' }, e.rep),
    h('td', { class: 'wrap' }, e.n + (e.step !== undefined ? ` @${e.step}` : '')),
    h('td', {}, h('span', { class: `outcome o-${e.outcome.replace(/ /g, '-')}` }, e.outcome)),
    h('td', { class: 'num' }, fmt(e.score)),
    h('td', { class: 'num' }, fmt(e.reward)),
    h('td', { class: 'num' }, e.turns),
  );
}
