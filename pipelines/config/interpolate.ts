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
  const root = structuredClone(src.value) as Record<string, unknown>;
  const refs = new References(root, src.origins, env);
  // vars first (they may use env), then everything else may use vars.
  if (root.vars !== undefined) root.vars = refs.walk(root.vars, { up: undefined, key: 'vars' }, false);
  for (const k of Object.keys(root)) if (k !== 'vars') root[k] = refs.walk(root[k], { up: undefined, key: k }, true);
  return { src: { value: root, origins: src.origins as Origins }, diagnostics: refs.diagnostics };
}

// The path of a value is spelled out only for a string with a reference in
// it: building one per value costs more than the rest of the walk.
type At = { readonly up: At | undefined; readonly key: string | number };
const pathOf = (at: At | undefined): Path => {
  const out: Array<string | number> = [];
  for (let a = at; a; a = a.up) out.push(a.key);
  return out.reverse();
};

/** The references of one document resolved in place, with a diagnostic for each that does not resolve. */
class References {
  readonly diagnostics: Diagnostic[] = [];

  constructor(
    private readonly root: Record<string, unknown>,
    private readonly origins: Origins,
    private readonly env: NodeJS.ProcessEnv,
  ) {}

  walk(v: unknown, at: At, allowVars: boolean): unknown {
    if (typeof v === 'string') return v.includes('${') ? this.expand(v, pathOf(at), allowVars) : v;
    if (Array.isArray(v)) return v.map((x, i) => this.walk(x, { up: at, key: i }, allowVars));
    if (isPlainObject(v)) {
      for (const k of Object.keys(v)) v[k] = this.walk(v[k], { up: at, key: k }, allowVars);
      return v;
    }
    return v;
  }

  private expand(s: string, path: Path, allowVars: boolean): unknown {
    const whole = /^\$\{([^}]*)\}$/.exec(s);
    if (whole) {
      const r = this.resolve(whole[1], path, 0, allowVars);
      return r.ok ? r.value : s;
    }
    return s.replace(REF, (match, expr: string | undefined, index: number) => {
      if (match === '$${') return '${';
      const r = this.resolve(expr ?? '', path, index, allowVars);
      if (!r.ok) return match;
      return typeof r.value === 'string' ? r.value : JSON.stringify(r.value);
    });
  }

  private resolve(expr: string, path: Path, index: number, allowVars: boolean): { ok: boolean; value?: unknown } {
    const m = /^(vars|env)\.([A-Za-z_][A-Za-z0-9_.-]*)(?::-(.*))?$/s.exec(expr.trim());
    const failed = (message: string) => {
      this.fail(path, index, message);
      return { ok: false };
    };
    if (!m) return failed(`cannot resolve \${${expr}}: use \${vars.NAME}, \${env.NAME} or \${env.NAME:-default}`);
    const [, scope, name, fallback] = m;
    if (scope === 'env') {
      const v = this.env[name];
      if (v !== undefined && v !== '') return { ok: true, value: v };
      if (fallback !== undefined) return { ok: true, value: fallback };
      return failed(`environment variable ${name} is not set (give a default with \${env.${name}:-VALUE})`);
    }
    if (fallback !== undefined) return failed(`defaults (:-) apply to env references only`);
    if (!allowVars) return failed(`vars may reference environment variables only`);
    const v = getPath(this.root.vars, name.split('.'));
    if (v === undefined) return failed(`undefined variable vars.${name}`);
    return { ok: true, value: v };
  }

  private fail(path: Path, index: number, message: string): void {
    const exact = this.origins.get(pathKey(path));
    let pos = (exact ?? originOf(this.origins, path))?.value;
    // Inside a one-line string the column of the reference itself is exact.
    if (pos && exact?.singleLine) pos = { ...pos, col: pos.col + (exact.contentShift ?? 0) + index };
    this.diagnostics.push({ pos, path: dotted(path), message });
  }
}
