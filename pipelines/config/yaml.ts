// YAML text → plain value + origins. Syntax errors and duplicate keys become
// diagnostics with positions instead of exceptions.
import { readFile } from 'node:fs/promises';
import { isAlias, isMap, isPair, isScalar, isSeq, LineCounter, parseDocument, type Node } from 'yaml';
import { UserError, type Diagnostic, type SourcePos } from '../../core/errors.js';
import { dotted, pathKey, type Origins, type Path, type Sourced } from '../../core/source.js';

export function parseYaml(text: string, file: string): Sourced {
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
      message: firstLine(e.message),
    }));
    throw new UserError(diags);
  }
  const origins: Origins = new Map();
  const duplicates: Diagnostic[] = [];
  const value = doc.toJS({ maxAliasCount: 1000 }) ?? {};

  function visit(node: Node | null | undefined, path: Path, keyAt?: SourcePos): void {
    if (!node) return;
    if (isAlias(node)) node = node.resolve(doc) as Node | undefined;
    if (!node) return;
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
    if (isMap(node)) {
      const seen = new Map<string, SourcePos>();
      for (const item of node.items) {
        if (!isPair(item)) continue;
        const k = isScalar(item.key) ? String(item.key.value) : String(item.key);
        const kAt = at((item.key as Node | null)?.range?.[0] ?? start);
        const first = seen.get(k);
        if (first) {
          duplicates.push({ pos: kAt, path: dotted([...path, k]), message: `duplicate key (first defined at line ${first.line})` });
          continue;
        }
        seen.set(k, kAt);
        if (item.value) visit(item.value as Node, [...path, k], kAt);
        else origins.set(pathKey([...path, k]), { value: kAt, key: kAt });
      }
    } else if (isSeq(node)) {
      node.items.forEach((item, i) => visit(item as Node, [...path, i]));
    }
  }
  visit(doc.contents as Node, []);
  if (duplicates.length) throw new UserError(duplicates);
  if (!origins.has('')) origins.set('', { value: { file, line: 1, col: 1 } });
  return { value, origins };
}

export async function readYamlFile(file: string): Promise<Sourced> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new UserError(`${file}: ${code === 'ENOENT' ? 'no such file' : `cannot read (${code})`}`);
  }
  return parseYaml(text, file);
}

function firstLine(s: string): string {
  return s.split('\n')[0].replace(/ at line \d+, column \d+:?$/, '');
}
