// A value loaded from YAML together with where each part of it was written.
// Every later step (merge, overrides, interpolation, validation) keeps the
// origins in step with the value, so any error can point at FILE:LINE:COL of
// the text that defined the offending value, even through `extends`.
import type { SourcePos } from './errors.js';

export type Path = readonly (string | number)[];

export interface Origin {
  /** Where the value starts. */
  value: SourcePos;
  /** Where its key starts (absent for list items and the document root). */
  key?: SourcePos;
  /** Offset from `value.col` to the first character of a string's content (1 when quoted). */
  contentShift?: number;
  /** True when the string spans one line, so column arithmetic inside it is exact. */
  singleLine?: boolean;
}

export type Origins = Map<string, Origin>;

const SEP = '\u0000';

export function pathKey(path: Path): string {
  return path.join(SEP);
}

export function splitKey(key: string): string[] {
  return key === '' ? [] : key.split(SEP);
}

/** `stages.rl.with.deps[0]`: the form users read in diagnostics. */
export function dotted(path: Path): string {
  let s = '';
  for (const p of path) {
    if (typeof p === 'number' || /^\d+$/.test(String(p))) s += `[${p}]`;
    else s += s ? `.${p}` : String(p);
  }
  return s;
}

export interface Sourced<T = unknown> {
  value: T;
  origins: Origins;
}

/** The origin of `path`, or of the nearest ancestor that has one. */
export function originOf(origins: Origins, path: Path): Origin | undefined {
  for (let n = path.length; n >= 0; n--) {
    const o = origins.get(pathKey(path.slice(0, n)));
    if (o) return o;
  }
  return undefined;
}

/** Position to report for a problem with the key itself (unknown key, duplicate). */
export function keyPos(origins: Origins, path: Path): SourcePos | undefined {
  const exact = origins.get(pathKey(path));
  if (exact) return exact.key ?? exact.value;
  return originOf(origins, path)?.value;
}

/** Position to report for a problem with the value at `path`. */
export function valuePos(origins: Origins, path: Path): SourcePos | undefined {
  return originOf(origins, path)?.value;
}

/** Drops the origins of `path` and everything below it. */
export function dropOrigins(origins: Origins, path: Path): void {
  const k = pathKey(path);
  for (const key of [...origins.keys()]) {
    if (key === k || key.startsWith(k + SEP) || k === '') origins.delete(key);
  }
}

/** Copies origins from one subtree to another (used when ablation clones a stage). */
export function copyOrigins(origins: Origins, from: Path, to: Path): void {
  const f = pathKey(from);
  for (const [key, o] of [...origins]) {
    if (key === f || key.startsWith(f + SEP)) {
      const rest = key.slice(f.length);
      origins.set(pathKey(to) + rest, o);
    }
  }
}
