// The trajectory browser: filters over the inlined index, a paged list (the DOM holds one
// page however many episodes there are), and the chosen trajectory loaded on demand, with
// the same episode of every other variant of its stage side by side.
import type { IndexEntry, PageData } from '../data.js';
import { fmt, h } from './dom.js';
import { loadTrajectory } from './load.js';
import { renderTrajectory } from './conversation.js';

const PAGE = 100;
const FILTERS = [
  ['task', 'task', (e: IndexEntry) => e.task],
  ['policy', 'policy', (e: IndexEntry) => e.policy],
  ['rep', 'repeat', (e: IndexEntry) => String(e.rep)],
  ['node', 'variant', (e: IndexEntry) => e.n],
  ['step', 'step', (e: IndexEntry) => (e.step === undefined ? '' : String(e.step))],
  ['outcome', 'outcome', (e: IndexEntry) => e.outcome],
] as const;

export function trajectoryBrowser(data: PageData): HTMLElement {
  const index = data.index;
  let shown = PAGE;
  let matching: IndexEntry[] = index;
  const selects = new Map<string, HTMLSelectElement>();
  const controls = h('div', { class: 'filters' });
  for (const [key, label, get] of FILTERS) {
    const values = [...new Set(index.map(get))].filter((v) => v !== '');
    if (key === 'step' && !values.length) continue;
    values.sort((a, b) => (/^\d+$/.test(a) && /^\d+$/.test(b) ? Number(a) - Number(b) : a.localeCompare(b)));
    const sel = h(
      'select',
      { id: `f-${key}`, 'aria-label': label, onchange: () => update() },
      h('option', { value: '' }, `all (${values.length})`),
      ...values.map((v) => h('option', { value: v }, v)),
    ) as HTMLSelectElement;
    selects.set(key, sel);
    controls.append(h('label', {}, `${label} `, sel));
  }
  const count = h('span', { id: 't-count' });
  const list = h('tbody', { id: 't-list' });
  const more = h('button', { id: 't-more', onclick: () => ((shown += PAGE), draw()) }, 'show more');
  const detail = h('div', { id: 't-detail' }, h('p', { class: 'hint' }, 'Choose a trajectory.'));

  function update(): void {
    const wanted = FILTERS.map(([key, , get]) => [get, selects.get(key)?.value ?? ''] as const).filter(
      ([, v]) => v !== '',
    );
    matching = index.filter((e) => wanted.every(([get, v]) => get(e) === v));
    shown = PAGE;
    draw();
  }

  function draw(): void {
    count.textContent = `${matching.length} of ${index.length} trajectories`;
    list.replaceChildren(
      ...matching
        .slice(0, shown)
        .map((e) =>
          h(
            'tr',
            { class: 't-row', 'data-i': e.i, tabindex: 0, onclick: () => open(e) },
            h('td', {}, e.task),
            h('td', {}, e.policy),
            h('td', {}, e.rep),
            h('td', {}, e.n + (e.step !== undefined ? ` @${e.step}` : '')),
            h('td', {}, h('span', { class: `outcome o-${e.outcome.replace(/ /g, '-')}` }, e.outcome)),
            h('td', {}, fmt(e.score)),
            h('td', {}, fmt(e.reward)),
            h('td', {}, e.turns),
          ),
        ),
    );
    more.hidden = matching.length <= shown;
  }

  /** The same episode (task, policy, repeat, step) in the stage's other variants. */
  const siblings = (e: IndexEntry) =>
    index.filter(
      (x) =>
        x.s === e.s &&
        x.n !== e.n &&
        x.task === e.task &&
        x.policy === e.policy &&
        x.rep === e.rep &&
        x.step === e.step,
    );

  async function open(e: IndexEntry): Promise<void> {
    for (const r of list.querySelectorAll('.selected')) r.classList.remove('selected');
    list.querySelector(`[data-i="${e.i}"]`)?.classList.add('selected');
    detail.replaceChildren(h('p', { class: 'hint' }, 'loading…'));
    try {
      const t = await loadTrajectory(e.i);
      const others = siblings(e);
      const compare = others.length
        ? h(
            'button',
            { id: 't-compare', onclick: () => void sideBySide([e, ...others]) },
            `side by side with ${others.length} other variant(s)`,
          )
        : null;
      detail.replaceChildren(...(compare ? [compare] : []), renderTrajectory(t, e.outcome));
      detail.dataset.i = String(e.i);
    } catch (err) {
      detail.replaceChildren(h('p', { class: 'bad' }, String(err)));
    }
  }

  async function sideBySide(entries: IndexEntry[]): Promise<void> {
    const ts = await Promise.all(entries.map((x) => loadTrajectory(x.i)));
    detail.replaceChildren(
      h('button', { onclick: () => void open(entries[0]) }, 'back to one'),
      h(
        'div',
        { class: 'side-by-side' },
        ...ts.map((t, k) =>
          h(
            'div',
            { class: 'side', 'data-i': entries[k].i },
            h('h4', {}, data.nodes[entries[k].n]?.variant || entries[k].n),
            renderTrajectory(t, entries[k].outcome),
          ),
        ),
      ),
    );
  }

  update();
  const head = h(
    'thead',
    {},
    h(
      'tr',
      {},
      ...['task', 'policy', 'repeat', 'variant', 'outcome', 'score', 'reward', 'turns'].map((c) => h('th', {}, c)),
    ),
  );
  return h(
    'div',
    { class: 'browser' },
    h('div', { class: 'browser-top' }, controls, count),
    h(
      'div',
      { class: 'browser-panes' },
      h('div', { class: 'list-pane' }, h('table', { class: 'list' }, head, list), more),
      detail,
    ),
  );
}
