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
  type YAMLMap,
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
  // An alias is written with `*`: a text without one needs no pass to find their targets.
  const walk = new OriginWalk(at, text.includes('*') ? aliasTargets(doc) : new Map<Alias, Node>());
  walk.visit(doc.contents as Node, []);
  if (walk.duplicates.length) throw new UserError(walk.duplicates);
  const origins = walk.origins;
  if (!origins.has('')) origins.set('', { value: { file, line: 1, col: 1 } });
  // The walk bounded the expansion exactly, so the library's own heuristic limit is not needed.
  return { value: doc.toJS({ maxAliasCount: -1 }), origins };
}

type Origin = Origins extends Map<string, infer O> ? O : never;

/**
 * One walk of the document's nodes, aliases followed: the origin of every value, the duplicate keys, and a refusal
 * of hostile structure (a value containing itself, too many values, too deep).
 */
class OriginWalk {
  readonly origins: Origins = new Map();
  readonly duplicates: Diagnostic[] = [];
  // Values on the path from the root: an alias to one of them would make a value contain itself.
  private readonly open = new Set<Node>();
  private values = 0;

  constructor(
    private readonly at: (offset: number) => SourcePos,
    private readonly anchors: Map<Alias, Node>,
  ) {}

  private refuse(node: Node, message: string): UserError {
    return new UserError([{ pos: this.at(node.range?.[0] ?? 0), message }]);
  }

  visit(node: Node | null | undefined, path: Path, keyAt?: SourcePos): void {
    if (!node) return;
    const written = node;
    if (isAlias(node)) {
      const target = this.anchors.get(node);
      if (!target) throw this.refuse(node, `alias *${node.source} has no anchor &${node.source} before it`);
      if (this.open.has(target)) throw this.refuse(node, `alias *${node.source} refers to a value that contains it`);
      node = target;
    }
    if (++this.values > MAX_VALUES)
      throw this.refuse(
        written,
        `more than ${MAX_VALUES} values once aliases are expanded (each alias counts as a copy of its value)`,
      );
    if (path.length > MAX_DEPTH) throw this.refuse(node, `nested more than ${MAX_DEPTH} levels deep`);
    this.origins.set(pathKey(path), this.originOf(node, keyAt));
    this.open.add(node);
    if (isMap(node)) this.visitMap(node, path);
    else if (isSeq(node)) node.items.forEach((item, i) => this.visit(item as Node, [...path, i]));
    this.open.delete(node);
  }

  private originOf(node: Node, keyAt: SourcePos | undefined): Origin {
    const start = node.range?.[0] ?? 0;
    const origin: Origin = { value: this.at(start) };
    if (keyAt) origin.key = keyAt;
    if (isScalar(node)) {
      const quoted = node.type === 'QUOTE_DOUBLE' || node.type === 'QUOTE_SINGLE';
      origin.contentShift = quoted ? 1 : 0;
      const end = node.range?.[1] ?? start;
      origin.singleLine = this.at(start).line === this.at(end).line && (node.type === 'PLAIN' || quoted);
    }
    return origin;
  }

  private visitMap(node: YAMLMap, path: Path): void {
    const start = node.range?.[0] ?? 0;
    const seen = new Map<string, SourcePos>();
    for (const item of node.items) {
      if (!isPair(item)) continue;
      const k = isScalar(item.key) ? String(item.key.value) : String(item.key);
      const kAt = this.at((item.key as Node | null)?.range?.[0] ?? start);
      const first = seen.get(k);
      if (first) {
        this.duplicates.push({
          pos: kAt,
          path: dotted([...path, k]),
          message: `duplicate key (first defined at line ${first.line})`,
        });
        continue;
      }
      seen.set(k, kAt);
      if (item.value) this.visit(item.value as Node, [...path, k], kAt);
      else this.origins.set(pathKey([...path, k]), { value: kAt, key: kAt });
    }
  }
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
