// The papers' published numbers (docs/experiments.md#references), compared row by row with our tables when an
// experiment names them with `reference:`. The numbers live beside this file, one module per paper.
import { MLTOOLBENCH_REFERENCES } from './references-mltoolbench.js';
import { SANDMLE_REFERENCES } from './references-sandmle.js';

export type ReferenceCell = string | number | null;

/** Published numbers: rows named by their key columns, the other columns values. */
export interface ReferenceTable {
  source: string;
  /** The columns that name a row (model, training, …); default: the columns whose every value is a string. */
  keys?: string[];
  columns?: string[];
  rows: Array<Record<string, ReferenceCell>>;
}

export const REFERENCES: Readonly<Record<string, ReferenceTable>> = {
  ...SANDMLE_REFERENCES,
  ...MLTOOLBENCH_REFERENCES,
};

/** Every column of a reference, in its declared order. */
export function referenceColumns(r: ReferenceTable): string[] {
  return r.columns ?? [...new Set(r.rows.flatMap((x) => Object.keys(x)))];
}

/** The columns that name a reference's rows. */
export function referenceKeys(r: ReferenceTable): string[] {
  if (r.keys) return r.keys;
  return referenceColumns(r).filter((c) => r.rows.every((x) => typeof x[c] === 'string'));
}

/** A row's label: its key values joined by " / ", an empty key left out ("Qwen3-8B / Base", "Claude-4.5-Sonnet"). */
export function referenceLabel(r: ReferenceTable, row: Record<string, ReferenceCell>): string {
  return referenceKeys(r)
    .map((k) => row[k])
    .filter((v) => v !== null && v !== undefined && v !== '')
    .map(String)
    .join(' / ');
}
