// A `reference:` as written (a built-in's name, `use:` with a join, or numbers written out) resolved to the
// paper's table and how its rows and columns join ours (docs/experiments.md#references).
import { REFERENCES, referenceColumns, referenceKeys, type ReferenceTable } from '../../core/references.js';
import type { ResolvedReference, WrittenReference } from './types.js';

/** The paper's table a written reference stands for; undefined for an unknown built-in (refused by the rules). */
export function referenceTable(written: string | WrittenReference): ReferenceTable | undefined {
  if (typeof written === 'string') return REFERENCES[written];
  if (written.use !== undefined) {
    const base = REFERENCES[written.use];
    return base && { ...base, ...(written.keys ? { keys: written.keys } : {}) };
  }
  if (written.source === undefined || written.rows === undefined) return undefined;
  return { source: written.source, keys: written.keys, columns: written.columns, rows: written.rows };
}

export function resolveReference(written: string | WrittenReference): ResolvedReference | undefined {
  const table = referenceTable(written);
  if (!table) return undefined;
  const w = typeof written === 'string' ? {} : written;
  const keys = referenceKeys(table);
  const values = referenceColumns(table).filter((c) => !keys.includes(c));
  return {
    table,
    ...(w.join ? { join: w.join } : {}),
    ...(w.on !== undefined ? { on: [w.on].flat() } : {}),
    compare: w.compare ?? Object.fromEntries(values.map((c) => [c, c])),
    derived: w.derived ?? {},
  };
}
