// An AIDE run's journal drawn as its search tree: each draft with the improvements and fixes made from it.
import { fmt, h } from './dom.js';
import type { JournalNode, Traj } from './load.js';

/** The AIDE journal as nested lists from each draft down; the chosen node is marked. */
export function journalTree(j: NonNullable<Traj['journal']>, root: HTMLElement): HTMLElement {
  const kids = new Map<number | null, JournalNode[]>();
  for (const n of j.nodes) kids.set(n.parent, [...(kids.get(n.parent) ?? []), n]);
  const branch = (parent: number | null): HTMLElement | null => {
    const mine = kids.get(parent);
    if (!mine?.length) return null;
    return h(
      'ul',
      {},
      ...mine.map((n) =>
        h(
          'li',
          { class: `node${n.buggy ? ' buggy' : ''}${n.id === j.best ? ' best' : ''}`, 'data-node': n.id },
          h(
            'a',
            {
              href: '#',
              onclick: (e: Event) => (
                e.preventDefault(),
                root.querySelector(`#turn-${n.id}`)?.scrollIntoView({ block: 'start' })
              ),
            },
            `#${n.id} ${n.operator}`,
          ),
          ` ${n.buggy ? 'buggy' : `metric ${fmt(n.metric)}`}${n.id === j.best ? ' ★ chosen' : ''}`,
          branch(n.id),
        ),
      ),
    );
  };
  return h('div', { class: 'journal' }, h('h4', {}, 'search tree'), branch(null));
}
