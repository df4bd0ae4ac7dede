// YAML text → plain value + origins. Syntax errors, duplicate keys and
// hostile structure (a value that contains itself through an alias, an alias
// bomb, nesting deep enough to exhaust the stack) become diagnostics with
// positions instead of exceptions.
import {
  isAlias,
  isMap,
  isPair,
  isScalar,
  isSeq,
  LineCounter,
  parseDocument,
  visit as visitDocument,
  type Alias,
  type Document,
  type Node,
} from 'yaml';
import { UserError, type Diagnostic, type SourcePos } from '../../core/errors.js';
import { readTextFile } from '../../core/text.js';
import { dotted, pathKey, type Origins, type Path, type Sourced } from '../../core/source.js';

/** Deeper than any config needs, and far from where the parser's own recursion overflows. */
export const MAX_DEPTH = 100;
/** Values in a document once aliases are expanded: an alias bomb reaches it within milliseconds. */
export const MAX_VALUES = 100_000;

/** Parses a document; an empty one is `{}`. */
export function parseYaml(text: string, file: string): Sourced {
  const parsed = parseYamlValue(text, file);
  return { value: parsed.value ?? {}, origins: parsed.origins };
}

/** Parses a document whose value may be any YAML value (null when empty). */
export function parseYamlValue(text: string, file: string): Sourced {
  const lc = new LineCounter();
  // Duplicate keys are found below, where their path is known.
  const doc = parseDocument(text, { lineCounter: lc, uniqueKeys: false, prettyErrors: false });
  const at = (offset: number): SourcePos => {
    const { line, col } = lc.linePos(offset);
    return { file, line, col };
  };
  if (doc.errors.length) {
    const diags: Diagnostic[] = doc.errors.map((e) => ({
      pos: at(e.pos[0]),
      // The parser catches its own stack overflow and reports it as an error at the place it reached.
      message: /Maximum call stack/.test(e.message)
        ? `nested more than ${MAX_DEPTH} levels deep`
        : firstLine(e.message),
    }));
    throw new UserError(diags);
  }
  const origins: Origins = new Map();
  const duplicates: Diagnostic[] = [];
  // An alias is written with `*`: a text without one needs no pass to find their targets.
  const anchors = text.includes('*') ? aliasTargets(doc) : new Map<Alias, Node>();
  const refuse = (node: Node, message: string) => new UserError([{ pos: at(node.range?.[0] ?? 0), message }]);
  // Values on the path from the root: an alias to one of them would make a value contain itself.
  const open = new Set<Node>();
  let values = 0;

  function visit(node: Node | null | undefined, path: Path, keyAt?: SourcePos): void {
    if (!node) return;
    const written = node;
    if (isAlias(node)) {
      const target = anchors.get(node);
      if (!target) throw refuse(node, `alias *${node.source} has no anchor &${node.source} before it`);
      if (open.has(target)) throw refuse(node, `alias *${node.source} refers to a value that contains it`);
      node = target;
    }
    if (++values > MAX_VALUES)
      throw refuse(
        written,
        `more than ${MAX_VALUES} values once aliases are expanded (each alias counts as a copy of its value)`,
      );
    if (path.length > MAX_DEPTH) throw refuse(node, `nested more than ${MAX_DEPTH} levels deep`);
    const start = node.range?.[0] ?? 0;
    const origin: Origins extends Map<string, infer O> ? O : never = { value: at(start) };
    if (keyAt) origin.key = keyAt;
    if (isScalar(node)) {
      const quoted = node.type === 'QUOTE_DOUBLE' || node.type === 'QUOTE_SINGLE';
      origin.contentShift = quoted ? 1 : 0;
      const end = node.range?.[1] ?? start;
      origin.singleLine = at(start).line === at(end).line && (node.type === 'PLAIN' || quoted);
    }
    origins.set(pathKey(path), origin);
    open.add(node);
    if (isMap(node)) {
      const seen = new Map<string, SourcePos>();
      for (const item of node.items) {
        if (!isPair(item)) continue;
        const k = isScalar(item.key) ? String(item.key.value) : String(item.key);
        const kAt = at((item.key as Node | null)?.range?.[0] ?? start);
        const first = seen.get(k);
        if (first) {
          duplicates.push({
            pos: kAt,
            path: dotted([...path, k]),
            message: `duplicate key (first defined at line ${first.line})`,
          });
          continue;
        }
        seen.set(k, kAt);
        if (item.value) visit(item.value as Node, [...path, k], kAt);
        else origins.set(pathKey([...path, k]), { value: kAt, key: kAt });
      }
    } else if (isSeq(node)) {
      node.items.forEach((item, i) => visit(item as Node, [...path, i]));
    }
    open.delete(node);
  }
  visit(doc.contents as Node, []);
  if (duplicates.length) throw new UserError(duplicates);
  if (!origins.has('')) origins.set('', { value: { file, line: 1, col: 1 } });
  // The walk above bounded the expansion exactly, so the library's own heuristic limit is not needed.
  return { value: doc.toJS({ maxAliasCount: -1 }), origins };
}

/**
 * What each alias refers to: the last node anchored with its name before it,
 * in document order (the YAML rule). One pass, where the library's
 * `Alias.resolve` walks the whole document for every alias.
 */
function aliasTargets(doc: Document): Map<Alias, Node> {
  const current = new Map<string, Node>();
  const targets = new Map<Alias, Node>();
  visitDocument(doc, {
    Node(_key, node) {
      if (isAlias(node)) {
        const t = current.get(node.source);
        if (t) targets.set(node, t);
      } else if (node.anchor) {
        current.set(node.anchor, node);
      }
    },
  });
  return targets;
}

export async function readYamlFile(file: string): Promise<Sourced> {
  return parseYaml(await readTextFile(file), file);
}

function firstLine(s: string): string {
  return s.split('\n')[0].replace(/ at line \d+, column \d+:?$/, '');
}
