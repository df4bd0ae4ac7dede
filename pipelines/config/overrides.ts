// `-S a.b.c=value` overrides (Hydra-like). Values are parsed as YAML so that
// `-S stages.rl.with.steps=10` is a number and `-S x=[a,b]` a list.
import { UserError, type Diagnostic } from '../../core/errors.js';
import { setPath } from './merge.js';
import { parseYamlValue } from './yaml.js';
import { dropOrigins, pathKey, type Sourced } from '../../core/source.js';

export interface Override {
  path: string[];
  value: unknown;
  /** The argument as typed, used as the "file" in diagnostics. */
  arg: string;
  valueCol: number;
}

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
    // Columns count from the start of `-S KEY=`, as the argument is shown.
    const valueCol = eq + 2 + 3;
    let value: unknown = '';
    try {
      // The same parser as config files, with the same bounds on aliases and depth.
      if (raw !== '') value = parseYamlValue(raw, `-S ${arg}`).value;
    } catch (err) {
      if (!(err instanceof UserError)) throw err;
      diags.push(
        ...err.diagnostics.map((d) =>
          d.pos?.line === 1 ? { ...d, pos: { ...d.pos, col: d.pos.col + valueCol - 1 } } : d,
        ),
      );
      continue;
    }
    out.push({ path, value, arg, valueCol });
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
    setPath(value, o.path, structuredClone(o.value));
    dropOrigins(origins, o.path);
    const pos = { file: `-S ${o.arg}`, line: 1, col: o.valueCol };
    origins.set(pathKey(o.path), { value: pos, key: { ...pos, col: 4 }, contentShift: 0, singleLine: true });
  }
  return { value, origins };
}
