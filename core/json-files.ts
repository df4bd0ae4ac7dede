// Reading and writing the JSON and JSON Lines files mlepipe keeps (manifests, records, metrics). A read names the
// file, and the line of a JSON Lines file, that is not what it should be: a damaged artifact is reported where it
// is, never carried on as a typed value it is not.
//
// Numbers that are not finite (a grader's infinite RMSE, a NaN score) are kept as Python's json module writes
// them: the bare tokens `Infinity`, `-Infinity` and `NaN` where a number stands. JSON itself has no such values
// (JSON.stringify would write null, and a valid submission would read back as none); Python's json.loads, which
// MLE-bench's reports and the release's evaluators use, reads them as floats, and so does every reader here.
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { dirname } from 'node:path';
import { UserError } from './errors.js';
import { parseJson } from './text.js';

/** Says what is wrong with a parsed value, or nothing when it has the expected shape. */
export type Check = (value: unknown) => string | undefined;

function checked<T>(value: unknown, where: string, check?: Check): T {
  const problem = check?.(value);
  if (problem) throw new UserError(`${where}: ${problem}`);
  return value as T;
}

// A string or one of the tokens; strings are matched whole so that a token inside one is left alone.
const TOKENS = /"(?:[^"\\]|\\.)*"|-?Infinity|NaN/g;
const NON_FINITE: Readonly<Record<string, number>> = { Infinity: Infinity, '-Infinity': -Infinity, NaN: NaN };

// The tokens travel through JSON.parse and JSON.stringify as strings behind a marker no record holds.
const marker = () => `nonfinite-${randomUUID()}:`;

/**
 * JSON.parse, also reading `Infinity`, `-Infinity` and `NaN` where a value stands (as Python's json.loads does);
 * a text JSON.parse reads is read by it alone. Throws as JSON.parse does on anything else.
 */
export function parseJsonText(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    if (!/Infinity|NaN/.test(text)) throw err;
    const m = marker();
    const swapped = text.replace(TOKENS, (t) => (t[0] === '"' ? t : `"${m}${t}"`));
    return JSON.parse(swapped, (_k, v: unknown) =>
      typeof v === 'string' && v.startsWith(m) ? NON_FINITE[v.slice(m.length)] : v,
    );
  }
}

/** parseJson (a bad text reported at its line and column) for text that may hold the non-finite tokens. */
function parseStored(text: string, file: string): unknown {
  try {
    return parseJsonText(text);
  } catch {
    return parseJson(text, file);
  }
}

/** JSON.stringify, with non-finite numbers written as the bare tokens Python's json.dumps writes. */
export function formatJson(value: unknown, indent?: number): string {
  const m = marker();
  let found = false;
  const text = JSON.stringify(
    value,
    (_k, v: unknown) => {
      if (typeof v !== 'number' || Number.isFinite(v)) return v;
      found = true;
      return `${m}${String(v)}`;
    },
    indent,
  );
  return found ? text.replace(new RegExp(`"${m}(-?Infinity|NaN)"`, 'g'), '$1') : text;
}

/** One JSON file, parsed and (with `check`) checked; a bad file is named with the line and column. */
export async function readJson<T>(file: string, check?: Check): Promise<T> {
  return checked<T>(parseStored(await readFile(file, 'utf8'), file), file, check);
}

export function readJsonSync<T>(file: string, check?: Check): T {
  return checked<T>(parseStored(readFileSync(file, 'utf8'), file), file, check);
}

/** Writes one JSON file (formatJson, ending in a newline) under a temporary name first. */
export async function writeJson(file: string, value: unknown, indent?: number): Promise<void> {
  await mkdir(dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  await writeFile(tmp, formatJson(value, indent) + '\n');
  await rename(tmp, file);
}

/** The records of a JSON Lines text, blank lines skipped; `shown` names the file in errors, with the line. */
export function parseJsonl<T>(text: string, shown: string, check?: Check): T[] {
  const out: T[] = [];
  text.split('\n').forEach((line, i) => {
    if (!line.trim()) return;
    let value: unknown;
    try {
      value = parseJsonText(line);
    } catch (err) {
      throw new UserError(`${shown}:${i + 1}: not valid JSON (${err instanceof Error ? err.message : String(err)})`);
    }
    out.push(checked<T>(value, `${shown}:${i + 1}`, check));
  });
  return out;
}

export async function readJsonl<T>(file: string, check?: Check): Promise<T[]> {
  return parseJsonl<T>(await readFile(file, 'utf8'), file, check);
}

export function readJsonlSync<T>(file: string, check?: Check): T[] {
  return parseJsonl<T>(readFileSync(file, 'utf8'), file, check);
}

/** The records as JSON Lines, one per line, ending in a newline. */
export function formatJsonl(records: readonly unknown[]): string {
  return records.map((r) => formatJson(r) + '\n').join('');
}

/** Writes the whole file under a temporary name first, so that a reader never sees half of it. */
export async function writeJsonl(file: string, records: readonly unknown[]): Promise<void> {
  await mkdir(dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  await writeFile(tmp, formatJsonl(records));
  await rename(tmp, file);
}

/** A check that the value is a JSON object (not an array or null). */
export const isObject: Check = (v) =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? undefined : 'expected a JSON object';
