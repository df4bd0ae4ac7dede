// `reference:` under a table or figure: a built-in that exists, a join whose rows are the paper's and ours, columns
// the paper has, derived formulas that parse. Our rows are known before anything runs for `rows: variant` and
// `node` (the graph's nodes) and for an eval's rows by policy (its `policies:`); other rows (task, curve, …) are
// joined when the report is built, where a row that joins nothing is noted beneath the table.
import type { Diagnostic } from '../../../core/errors.js';
import { REFERENCES, referenceColumns, referenceKeys, referenceLabel } from '../../../core/references.js';
import { FormulaError, parseFormula } from '../../../core/rewards/parse.js';
import { dotted, valuePos, type Path } from '../../../core/source.js';
import { suggestion } from '../../../core/jsonschema.js';
import { variantLabel } from '../../../stages/ablate/index.js';
import { compileGraph, type GraphNode } from '../../compile/graph.js';
import { resolveReference } from '../../config/reference.js';
import type { ResolvedStage, WrittenReference } from '../../config/types.js';
import { formulaNames, rowKey } from '../../report/compare.js';
import type { Rule, RuleInput } from './types.js';

/** Breakdowns whose rows are one per policy of the node. */
const BY_POLICY = ['policy', 'win_rate', 'latency'];

interface Entry {
  path: Path;
  from: string;
  rows: string;
  columns?: readonly string[];
  /** A figure's key defaults to its x. */
  x?: string;
  reference: string | WrittenReference;
}

export const referenceJoins: Rule = (input) => {
  const { doc } = input;
  const entries: Entry[] = [];
  for (const [n, t] of Object.entries(doc.tables ?? {}))
    if (t.reference !== undefined)
      entries.push({ ...t, path: ['tables', n], rows: t.rows ?? 'variant', reference: t.reference });
  for (const [n, f] of Object.entries(doc.figures ?? {}))
    if (f.reference !== undefined)
      entries.push({ ...f, path: ['figures', n], rows: f.rows ?? 'variant', reference: f.reference });
  if (!entries.length) return [];
  const nodes = graphNodes(input);
  return entries.flatMap((e) => checkEntry(input, e, nodes));
};

/** The graph's nodes, when the stages compile; a graph that does not is reported by the rules on the stages. */
function graphNodes({ doc, params, origins }: RuleInput): GraphNode[] | undefined {
  const stages: ResolvedStage[] = Object.entries(doc.stages ?? {}).map(([id, st]) => ({
    id,
    uses: st.uses,
    needs: st.needs ?? [],
    params: params.get(id) ?? {},
    target: st.target,
    matrix: st.matrix,
    gpus: 0,
    retries: 0,
  }));
  try {
    return [...compileGraph({ stages, origins }).nodes.values()];
  } catch {
    // A cycle, an unknown target or two clones of one name: each has its own rule and message.
    return undefined;
  }
}

/**
 * Our rows' key columns and values, as the report will build them (a figure's rows also carry the node id as
 * `variant` and the matrix values by their last name); undefined where only a run tells.
 */
export function staticRows(
  doc: RuleInput['doc'],
  nodes: readonly GraphNode[],
  e: Pick<Entry, 'from' | 'rows' | 'path'>,
): Array<Record<string, string>> | undefined {
  const st = doc.stages?.[e.from];
  if (!st) return undefined;
  const stage = st.uses === 'ablate' ? (st.target ?? '') : e.from;
  const mine = nodes.filter((n) => n.stage.id === stage);
  const varied = mine.some((n) => Object.keys(n.variant).length);
  const figure = e.path[0] === 'figures';
  const label = (n: GraphNode) => (figure ? n.id : variantLabel(n.variant) || n.id);
  const matrix = (n: GraphNode): Record<string, string> =>
    figure ? Object.fromEntries(Object.entries(n.variant).map(([k, v]) => [k.split('.').pop()!, String(v)])) : {};
  if (e.rows === 'node' || e.rows === 'variant') {
    if (figure) return mine.map((n) => ({ ...matrix(n), node: n.id, variant: n.id }));
    return mine.map((n): Record<string, string> =>
      e.rows === 'variant' && varied ? { variant: label(n) } : { node: n.id },
    );
  }
  if (!BY_POLICY.includes(e.rows) || doc.stages[stage]?.uses !== 'eval') return undefined;
  return mine.flatMap((n) => {
    const p = n.params as { policy?: string; policies?: string[] };
    const policies = p.policies ?? (p.policy ? [p.policy] : []);
    return policies.map((policy) => ({ ...matrix(n), ...(varied || figure ? { variant: label(n) } : {}), policy }));
  });
}

function checkEntry(input: RuleInput, e: Entry, nodes: GraphNode[] | undefined): Diagnostic[] {
  const out: Diagnostic[] = [];
  const at = (path: Path, message: string) =>
    out.push({ pos: valuePos(input.origins, path), path: dotted(path), message });
  const base = [...e.path, 'reference'];
  const w = typeof e.reference === 'string' ? { use: e.reference } : e.reference;
  const builtins = Object.keys(REFERENCES);
  if (w.use !== undefined && !Object.hasOwn(REFERENCES, w.use)) {
    const where = typeof e.reference === 'string' ? base : [...base, 'use'];
    at(where, `unknown reference "${w.use}" (built in: ${builtins.join(', ')})${suggestion(w.use, builtins)}`);
    return out;
  }
  if (w.use !== undefined && (w.source !== undefined || w.rows !== undefined))
    at(base, 'give use: or source: and rows:, not both');
  if (w.use === undefined && (w.source === undefined || w.rows === undefined))
    at(base, 'give use: (a built-in reference) or source: and rows: (the numbers written out)');
  const ref = resolveReference(e.reference);
  if (out.length || !ref) return out;
  const labels = ref.table.rows.map((r) => referenceLabel(ref.table, r));
  const paperColumns = referenceColumns(ref.table).filter((c) => !referenceKeys(ref.table).includes(c));
  for (const [paper, ours] of Object.entries(w.compare ?? {})) {
    if (!paperColumns.includes(paper))
      at([...base, 'compare', paper], `the paper has no column "${paper}" (${paperColumns.join(', ')})`);
    else if (e.columns && !e.columns.includes(ours))
      at([...base, 'compare', paper], `"${ours}" is not a column of this table (${e.columns.join(', ')})`);
  }
  if (!w.compare && e.columns && !paperColumns.some((c) => e.columns!.includes(c)))
    at(
      base,
      `none of the paper's columns (${paperColumns.join(', ')}) is a column of this table: name pairs with compare:`,
    );
  for (const label of Object.keys(w.join ?? {}))
    if (!labels.includes(label))
      at(
        [...base, 'join', label],
        `the paper has no row "${label}" (rows: ${labels.join('; ')})${suggestion(label, labels)}`,
      );
  const rows = nodes && staticRows(input.doc, nodes, e);
  const on = ref.on ?? (e.x !== undefined ? [e.x] : rows?.[0] && Object.keys(rows[0]));
  const keys =
    rows && on && on.every((c) => rows.every((r) => c in r)) ? [...new Set(rows.map((r) => rowKey(r, on)))] : undefined;
  if (keys) placement(w, labels, keys, base, at);
  for (const [name, formula] of Object.entries(w.derived ?? {})) {
    const names = w.join ? Object.values(w.join) : (keys ?? labels);
    try {
      parseFormula(formula, formulaNames(names));
    } catch (err) {
      if (!(err instanceof FormulaError)) throw err;
      at([...base, 'derived', name], `${err.message} (in "${formula}": the names are our joined rows' keys)`);
    }
  }
  return out;
}

/** The paper's rows each placed on a row of ours: every `join:` target is one of our keys, or some label is. */
function placement(
  w: WrittenReference,
  labels: readonly string[],
  keys: readonly string[],
  base: Path,
  at: (path: Path, message: string) => void,
): void {
  const ours = `this table's rows: ${keys.join('; ') || 'none'}`;
  if (w.join) {
    for (const [label, key] of Object.entries(w.join))
      if (!keys.includes(key))
        at([...base, 'join', label], `cannot place "${label}": "${key}" is none of ${ours}${suggestion(key, keys)}`);
  } else if (!labels.some((l) => keys.includes(l)))
    at(
      base,
      `cannot place the paper's rows (${labels.join('; ')}): none is one of ${ours}; name how they join with join:`,
    );
}
