// Small DOM helpers for the report page (browser code, bundled at build time).

type Child = Node | string | number | null | undefined | false;

/** An element with attributes (`class`, `data-*`, event handlers as functions) and children. */
export function h(tag: string, attrs: Record<string, unknown> = {}, ...children: (Child | Child[])[]): HTMLElement {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (typeof v === 'function') el.addEventListener(k.replace(/^on/, ''), v as EventListener);
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children.flat())
    if (c !== null && c !== undefined && c !== false) el.append(c instanceof Node ? c : String(c));
  return el;
}

export const $ = <T extends HTMLElement = HTMLElement>(sel: string, root: ParentNode = document): T =>
  root.querySelector(sel) as T;

export const fmt = (v: unknown): string => {
  if (v === null || v === undefined) return '—';
  if (typeof v === 'number') return Number.isInteger(v) ? String(v) : String(Number(v.toPrecision(4)));
  return String(v);
};

export const seconds = (ms: unknown) =>
  typeof ms === 'number' ? `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s` : '—';

/** A plain table of label/value pairs. */
export function kvTable(rows: [string, unknown][], cls = 'kv'): HTMLElement {
  return h(
    'table',
    { class: cls },
    h('tbody', {}, ...rows.map(([k, v]) => h('tr', {}, h('th', {}, k), h('td', {}, fmt(v))))),
  );
}
