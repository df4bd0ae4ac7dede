// Our rows beside the paper's (docs/experiments.md#references): each of our rows finds the paper's row joined to it,
// and each compared column gets the paper's value, the difference (ours − paper) and whether the paper's value lies
// inside our 95% interval; derived lines are computed from the joined rows for both sides.
import { referenceLabel, type ReferenceCell } from '../../core/references.js';
import { evaluate, parseFormula, type Ast } from '../../core/rewards/parse.js';
import type { ResolvedReference } from '../config/types.js';
import type { MetricValue } from '../../stages/contract.js';

type Row = Record<string, MetricValue>;
type PaperRow = Record<string, ReferenceCell>;

/** What a comparison adds beside a compared column `c`: `c_paper`, `c_diff`, `c_inside`. */
export const COMPARISON_SUFFIXES = ['_paper', '_diff', '_inside'] as const;

/** A row's key: its values in the key columns, joined by " / ". */
export const rowKey = (row: Readonly<Record<string, unknown>>, on: readonly string[]): string =>
  on.map((c) => (row[c] === null || row[c] === undefined ? '' : String(row[c]))).join(' / ');

export interface Join {
  /** Our key → the paper's row joined to it. */
  byKey: Map<string, PaperRow>;
  /** The paper's labels named by `join:` with no such row in the paper's table. */
  unknownLabels: string[];
  /** Labels whose row joins none of ours (a `join:` target we do not have, or no row of ours with that key). */
  unplaced: Array<{ label: string; key: string }>;
  /** The paper's rows not named by `join:` (or, without one, whose label is none of our keys). */
  paperOnly: string[];
}

/** Joins the paper's rows to our keys: by `join:`, else a paper row joins the row of ours whose key is its label. */
export function joinReference(ref: ResolvedReference, ourKeys: readonly string[]): Join {
  const labelled = new Map(ref.table.rows.map((r) => [referenceLabel(ref.table, r), r]));
  const ours = new Set(ourKeys);
  const out: Join = { byKey: new Map(), unknownLabels: [], unplaced: [], paperOnly: [] };
  const pairs = ref.join ? Object.entries(ref.join) : [...labelled.keys()].map((l) => [l, l] as [string, string]);
  for (const [label, key] of pairs) {
    const row = labelled.get(label);
    if (!row) out.unknownLabels.push(label);
    else if (ours.has(key)) out.byKey.set(key, row);
    else if (ref.join) out.unplaced.push({ label, key });
  }
  const joined = new Set(ref.join ? Object.keys(ref.join) : [...out.byKey.keys()]);
  out.paperOnly = [...labelled.keys()].filter((l) => !joined.has(l));
  return out;
}

const tidy = (x: number) => Math.round(x * 1e6) / 1e6;

/** Puts the paper's value, the difference and the inside-our-interval mark beside column `c` of a row. */
function annotate(row: Row, c: string, paper: ReferenceCell | undefined): void {
  if (paper === null || paper === undefined) return;
  row[`${c}_paper`] = paper;
  const ours = row[c];
  if (typeof paper !== 'number' || typeof ours !== 'number') return;
  row[`${c}_diff`] = tidy(ours - paper);
  const lo = row[`${c}_lo`];
  const hi = row[`${c}_hi`];
  if (typeof lo === 'number' && typeof hi === 'number') row[`${c}_inside`] = lo <= paper && paper <= hi;
}

export interface Compared {
  rows: Row[];
  /** Our columns that have the paper's values beside them. */
  compared: string[];
  join: Join;
}

/**
 * Our rows with the paper's beside them, and a derived line after them for each `derived:` entry (labelled in the
 * first key column). `columns` are the table's shown columns; `on` its key columns.
 */
export function compareTable(
  rows: readonly Row[],
  columns: readonly string[],
  on: readonly string[],
  ref: ResolvedReference,
): Compared {
  const keys = rows.map((r) => rowKey(r, on));
  const join = joinReference(ref, keys);
  const pairs = Object.entries(ref.compare).filter(([, ours]) => columns.includes(ours) && !on.includes(ours));
  const out = rows.map((r, i) => {
    const paper = join.byKey.get(keys[i]);
    if (!paper) return r;
    const row = { ...r };
    for (const [p, c] of pairs) annotate(row, c, paper[p]);
    return row;
  });
  for (const [name, formula] of Object.entries(ref.derived)) {
    const line = derivedLine(formula, pairs, out, keys, join);
    if (line) out.push({ [on[0] ?? columns[0]]: name, ...line });
  }
  const compared = pairs.map(([, c]) => c).filter((c) => out.some((r) => r[`${c}_paper`] !== undefined));
  return { rows: out, compared: [...new Set(compared)], join };
}

/** The identifiers among our keys: the names a derived formula may use. */
export const formulaNames = (keys: readonly string[]) => keys.filter((k) => /^[A-Za-z_][A-Za-z0-9_]*$/.test(k));

/** A derived line: the formula over our joined rows and over the paper's, column by column. */
function derivedLine(
  formula: string,
  pairs: Array<[string, string]>,
  rows: readonly Row[],
  keys: readonly string[],
  join: Join,
): Row | undefined {
  let ast: Ast;
  try {
    ast = parseFormula(formula, formulaNames([...join.byKey.keys()]));
  } catch {
    // Refused at validation when the rows are known there; a key missing from this run's rows leaves no line.
    return undefined;
  }
  const used = variables(ast);
  const line: Row = {};
  for (const [p, c] of pairs) {
    const ours: Record<string, number> = {};
    const paper: Record<string, number> = {};
    for (const name of used) {
      const mine = rows[keys.indexOf(name)]?.[c];
      const theirs = join.byKey.get(name)?.[p];
      if (typeof mine === 'number') ours[name] = mine;
      if (typeof theirs === 'number') paper[name] = theirs;
    }
    const complete = (vars: Record<string, number>) => used.every((n) => n in vars);
    line[c] = complete(ours) ? tidy(evaluate(ast, ours)) : null;
    if (complete(paper)) annotate(line, c, tidy(evaluate(ast, paper)));
  }
  return line;
}

function variables(ast: Ast): string[] {
  if (ast.t === 'var') return [ast.name];
  if (ast.t === 'neg') return variables(ast.arg);
  if (ast.t === 'bin') return [...new Set([...variables(ast.left), ...variables(ast.right)])];
  if (ast.t === 'call') return [...new Set(ast.args.flatMap(variables))];
  return [];
}

/** The paper's points for a figure: at each of our rows that joins a paper row, the paper's value of `y`. */
export function paperPoints(
  rows: readonly Row[],
  def: { x: string; y: string; color?: string },
  ref: ResolvedReference,
): Row[] {
  const on = ref.on ?? [def.x];
  const column = Object.entries(ref.compare).find(([, ours]) => ours === def.y)?.[0];
  if (!column) return [];
  const keys = rows.map((r) => rowKey(r, on));
  const join = joinReference(ref, keys);
  const seen = new Set<string>();
  const out: Row[] = [];
  rows.forEach((r, i) => {
    const value = join.byKey.get(keys[i])?.[column];
    if (typeof value !== 'number') return;
    const point: Row = { [def.x]: r[def.x], [def.y]: value, ...(def.color ? { [def.color]: r[def.color] } : {}) };
    const id = JSON.stringify(point);
    if (!seen.has(id)) out.push({ ...point, source: 'paper' });
    seen.add(id);
  });
  return out;
}
