// `${vars.NAME}`, `${env.NAME}` and `${env.NAME:-default}` in any string.
// A string that is exactly one reference takes the referenced value's type
// (so `seed: ${vars.seed}` stays a number); `$${` writes a literal `${`.
import { UserError, type Diagnostic } from '../../core/errors.js';
import { getPath, isPlainObject } from './merge.js';
import { dotted, originOf, pathKey, type Origins, type Path, type Sourced } from '../../core/source.js';

const REF = /\$\$\{|\$\{([^}]*)\}/g;

export function interpolate(src: Sourced, env: NodeJS.ProcessEnv = process.env): Sourced {
  const r = interpolateAll(src, env);
  if (r.diagnostics.length) throw new UserError(r.diagnostics);
  return r.src;
}

/** As interpolate, but a reference that does not resolve is left as written and reported in `diagnostics`. */
export function interpolateAll(
  src: Sourced,
  env: NodeJS.ProcessEnv = process.env,
): { src: Sourced; diagnostics: Diagnostic[] } {
  const diags: Diagnostic[] = [];
  const root = structuredClone(src.value) as Record<string, unknown>;

  const fail = (path: Path, index: number, message: string) => {
    const exact = src.origins.get(pathKey(path));
    let pos = (exact ?? originOf(src.origins, path))?.value;
    // Inside a one-line string the column of the reference itself is exact.
    if (pos && exact?.singleLine) pos = { ...pos, col: pos.col + (exact.contentShift ?? 0) + index };
    diags.push({ pos, path: dotted(path), message });
  };

  function resolveRef(expr: string, path: Path, index: number, allowVars: boolean): { ok: boolean; value?: unknown } {
    const m = /^(vars|env)\.([A-Za-z_][A-Za-z0-9_.-]*)(?::-(.*))?$/s.exec(expr.trim());
    if (!m) {
      fail(path, index, `cannot resolve \${${expr}}: use \${vars.NAME}, \${env.NAME} or \${env.NAME:-default}`);
      return { ok: false };
    }
    const [, scope, name, fallback] = m;
    if (scope === 'env') {
      const v = env[name];
      if (v !== undefined && v !== '') return { ok: true, value: v };
      if (fallback !== undefined) return { ok: true, value: fallback };
      fail(path, index, `environment variable ${name} is not set (give a default with \${env.${name}:-VALUE})`);
      return { ok: false };
    }
    if (fallback !== undefined) {
      fail(path, index, `defaults (:-) apply to env references only`);
      return { ok: false };
    }
    if (!allowVars) {
      fail(path, index, `vars may reference environment variables only`);
      return { ok: false };
    }
    const v = getPath(root.vars, name.split('.'));
    if (v === undefined) {
      fail(path, index, `undefined variable vars.${name}`);
      return { ok: false };
    }
    return { ok: true, value: v };
  }

  // The path of a value is spelled out only for a string with a reference in
  // it: building one per value costs more than the rest of the walk.
  type At = { readonly up: At | undefined; readonly key: string | number };
  const pathOf = (at: At | undefined): Path => {
    const out: Array<string | number> = [];
    for (let a = at; a; a = a.up) out.push(a.key);
    return out.reverse();
  };
  function walk(v: unknown, at: At, allowVars: boolean): unknown {
    if (typeof v === 'string') return v.includes('${') ? expand(v, pathOf(at), allowVars) : v;
    if (Array.isArray(v)) return v.map((x, i) => walk(x, { up: at, key: i }, allowVars));
    if (isPlainObject(v)) {
      for (const k of Object.keys(v)) v[k] = walk(v[k], { up: at, key: k }, allowVars);
      return v;
    }
    return v;
  }

  function expand(s: string, path: Path, allowVars: boolean): unknown {
    if (!s.includes('${')) return s;
    const whole = /^\$\{([^}]*)\}$/.exec(s);
    if (whole) {
      const r = resolveRef(whole[1], path, 0, allowVars);
      return r.ok ? r.value : s;
    }
    return s.replace(REF, (match, expr: string | undefined, index: number) => {
      if (match === '$${') return '${';
      const r = resolveRef(expr ?? '', path, index, allowVars);
      if (!r.ok) return match;
      return typeof r.value === 'string' ? r.value : JSON.stringify(r.value);
    });
  }

  // vars first (they may use env), then everything else may use vars.
  if (root.vars !== undefined) root.vars = walk(root.vars, { up: undefined, key: 'vars' }, false);
  for (const k of Object.keys(root)) if (k !== 'vars') root[k] = walk(root[k], { up: undefined, key: k }, true);
  return { src: { value: root, origins: src.origins as Origins }, diagnostics: diags };
}
