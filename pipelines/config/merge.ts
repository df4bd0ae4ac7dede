// `extends` and `-S` both layer one sourced value over another. Maps merge
// key by key; lists and scalars are replaced whole (docs/experiments.md), and the
// origins follow whichever layer supplied each value.
import { dropOrigins, pathKey, type Origins, type Path, type Sourced } from '../../core/source.js';

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Deep-merges `top` over `base`; neither input is modified. */
export function mergeSourced(base: Sourced, top: Sourced): Sourced {
  const origins: Origins = new Map(base.origins);
  const value = mergeAt(structuredClone(base.value), top.value, [], top.origins, origins);
  return { value, origins };
}

function mergeAt(base: unknown, top: unknown, path: Path, topOrigins: Origins, out: Origins): unknown {
  if (isPlainObject(base) && isPlainObject(top)) {
    const o = topOrigins.get(pathKey(path));
    if (o && path.length)
      out.set(pathKey(path), { ...(out.get(pathKey(path)) ?? o), key: o.key ?? out.get(pathKey(path))?.key });
    for (const [k, v] of Object.entries(top)) {
      base[k] = mergeAt(base[k], v, [...path, k], topOrigins, out);
    }
    return base;
  }
  dropOrigins(out, path);
  const prefix = pathKey(path);
  for (const [k, o] of topOrigins) {
    if (k === prefix || k.startsWith(prefix + '\u0000') || prefix === '') out.set(k, o);
  }
  return structuredClone(top);
}

/** Sets `path` to `value` in place, creating maps on the way. */
export function setPath(target: Record<string, unknown>, path: Path, value: unknown): void {
  let cur: Record<string, unknown> = target;
  for (let i = 0; i < path.length - 1; i++) {
    const k = String(path[i]);
    const next = cur[k];
    if (Array.isArray(next) && /^\d+$/.test(String(path[i + 1]))) {
      cur = next as unknown as Record<string, unknown>;
      continue;
    }
    if (!isPlainObject(next)) cur[k] = {};
    cur = cur[k] as Record<string, unknown>;
  }
  cur[String(path[path.length - 1])] = value;
}

export function getPath(target: unknown, path: Path): unknown {
  let cur = target;
  for (const k of path) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[String(k)];
  }
  return cur;
}
