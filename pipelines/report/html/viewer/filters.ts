// The trajectory browser's filters: one select per field of the index, each listing the values the index
// holds (the step only where some trajectory has one).
import type { IndexEntry } from '../data.js';
import { h } from './dom.js';

const FILTERS = [
  ['task', 'task', (e: IndexEntry) => e.task],
  ['policy', 'policy', (e: IndexEntry) => e.policy],
  ['rep', 'repeat', (e: IndexEntry) => String(e.rep)],
  ['node', 'variant', (e: IndexEntry) => e.n],
  ['step', 'step', (e: IndexEntry) => (e.step === undefined ? '' : String(e.step))],
  ['outcome', 'outcome', (e: IndexEntry) => e.outcome],
] as const;

export interface Filters {
  element: HTMLElement;
  /** A test for the entries the selects choose now. */
  matcher(): (e: IndexEntry) => boolean;
}

/** The selects over `index`; `changed` runs when the user picks another value. */
export function filterControls(index: readonly IndexEntry[], changed: () => void): Filters {
  const selects = new Map<string, HTMLSelectElement>();
  const element = h('div', { class: 'filters' });
  for (const [key, label, get] of FILTERS) {
    const values = [...new Set(index.map(get))].filter((v) => v !== '');
    if (key === 'step' && !values.length) continue;
    values.sort((a, b) => (/^\d+$/.test(a) && /^\d+$/.test(b) ? Number(a) - Number(b) : a.localeCompare(b)));
    const sel = h(
      'select',
      { id: `f-${key}`, 'aria-label': label, onchange: changed },
      h('option', { value: '' }, `all (${values.length})`),
      ...values.map((v) => h('option', { value: v }, v)),
    ) as HTMLSelectElement;
    selects.set(key, sel);
    element.append(h('label', {}, `${label} `, sel));
  }
  return {
    element,
    matcher() {
      const wanted = FILTERS.map(([key, , get]) => [get, selects.get(key)?.value ?? ''] as const).filter(
        ([, v]) => v !== '',
      );
      return (e) => wanted.every(([get, v]) => get(e) === v);
    },
  };
}
