// The trajectory browser's detail pane: the chosen trajectory, loaded on demand, and the same episode of
// every other variant of its stage side by side.
import type { IndexEntry, PageData } from '../data.js';
import { h } from './dom.js';
import { loadTrajectory } from './load.js';
import { renderTrajectory } from './conversation.js';

export interface Detail {
  element: HTMLElement;
  open(e: IndexEntry): Promise<void>;
  /** Told when variants go side by side (true) and back to one (false), so the page can make room. */
  comparing: (on: boolean) => void;
}

/** The pane; `opening` runs as each trajectory is asked for (the list marks its row). */
export function trajectoryDetail(data: PageData, opening: (e: IndexEntry) => void): Detail {
  const element = h('div', { id: 't-detail' }, h('p', { class: 'hint' }, 'Choose a trajectory.'));

  /** The same episode (task, policy, repeat, step) in the stage's other variants. */
  const siblings = (e: IndexEntry) =>
    data.index.filter(
      (x) =>
        x.s === e.s &&
        x.n !== e.n &&
        x.task === e.task &&
        x.policy === e.policy &&
        x.rep === e.rep &&
        x.step === e.step,
    );

  const detail: Detail = { element, open, comparing: () => {} };

  async function open(e: IndexEntry): Promise<void> {
    opening(e);
    detail.comparing(false);
    element.replaceChildren(h('p', { class: 'hint' }, 'loading…'));
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
      element.replaceChildren(...(compare ? [compare] : []), renderTrajectory(t, e.outcome));
      element.dataset.i = String(e.i);
    } catch (err) {
      element.replaceChildren(h('p', { class: 'bad' }, String(err)));
    }
  }

  async function sideBySide(entries: IndexEntry[]): Promise<void> {
    const ts = await Promise.all(entries.map((x) => loadTrajectory(x.i)));
    detail.comparing(true);
    element.replaceChildren(
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

  return detail;
}
