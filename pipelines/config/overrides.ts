// `-S a.b.c=value` overrides (Hydra-like). Values are parsed as YAML so that
// `-S stages.rl.with.steps=10` is a number and `-S x=[a,b]` a list.
import { UserError, type Diagnostic } from '../../core/errors.js';
import { getPath, isPlainObject, setPath } from './merge.js';
import { parseYamlValue } from './yaml.js';
import { dropOrigins, pathKey, type Sourced } from '../../core/source.js';

export interface Override {
  path: string[];
  value: unknown;
  /** The argument as typed, used as the "file" in diagnostics. */
  arg: string;
  valueCol: number;
  /** Where each segment of the path starts, so that a problem with a key points at that key. */
  keyCols: number[];
}

/** Columns count from the `-` of `-S `, as the argument is shown in diagnostics. */
const SHOWN_PREFIX = '-S '.length;

export function parseOverrides(args: readonly string[]): Override[] {
  const diags: Diagnostic[] = [];
  const out: Override[] = [];
  for (const arg of args) {
    const eq = arg.indexOf('=');
    const keyText = eq < 0 ? arg : arg.slice(0, eq);
    const path = keyText.split('.');
    if (eq < 0 || path.some((p) => p === '')) {
      diags.push({ message: `-S ${arg}: expected KEY.PATH=VALUE (for example -S stages.rl.with.steps=10)` });
      continue;
    }
    const raw = arg.slice(eq + 1);
    const valueCol = SHOWN_PREFIX + eq + 2;
    const keyCols: number[] = [];
    path.reduce((col, p) => (keyCols.push(col), col + p.length + 1), SHOWN_PREFIX + 1);
    let value: unknown = '';
    try {
      // The same parser as config files, with the same bounds on aliases and depth.
      if (raw !== '') value = parseYamlValue(raw, `-S ${arg}`).value;
    } catch (err) {
      if (!(err instanceof UserError)) throw err;
      diags.push(
        ...err.diagnostics.map((d) => ({
          ...d,
          pos: d.pos?.line === 1 ? { ...d.pos, col: d.pos.col + valueCol - 1 } : d.pos,
          path: keyText,
          message: `cannot read the value ${JSON.stringify(raw)}: ${d.message}`,
        })),
      );
      continue;
    }
    out.push({ path, value, arg, valueCol, keyCols });
  }
  if (diags.length) throw new UserError(diags);
  return out;
}

export function applyOverrides(src: Sourced, overrides: readonly Override[]): Sourced {
  // Nothing to set: the copy below would only cost time on a large experiment.
  if (!overrides.length) return src;
  const value = structuredClone(src.value) as Record<string, unknown>;
  const origins = new Map(src.origins);
  for (const o of overrides) {
    // The mappings the override makes on its way down were written in the argument, at their segment.
    const made = o.path.findIndex(
      (_, i) => i < o.path.length - 1 && !isPlainObject(getPath(value, o.path.slice(0, i + 1))),
    );
    setPath(value, o.path, structuredClone(o.value));
    const at = (col: number) => ({ file: `-S ${o.arg}`, line: 1, col });
    if (made >= 0)
      for (let i = made; i < o.path.length - 1; i++) {
        dropOrigins(origins, o.path.slice(0, i + 1));
        origins.set(pathKey(o.path.slice(0, i + 1)), { value: at(o.keyCols[i + 1]), key: at(o.keyCols[i]) });
      }
    dropOrigins(origins, o.path);
    const key = at(o.keyCols[o.path.length - 1]);
    origins.set(pathKey(o.path), { value: at(o.valueCol), key, contentShift: 0, singleLine: true });
  }
  return { value, origins };
}
