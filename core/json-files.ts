// Reading and writing the JSON and JSON Lines files mlepipe keeps (manifests, records, metrics). A read names the
// file, and the line of a JSON Lines file, that is not what it should be: a damaged artifact is reported where it
// is, never carried on as a typed value it is not.
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
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

/** One JSON file, parsed and (with `check`) checked; a bad file is named with the line and column. */
export async function readJson<T>(file: string, check?: Check): Promise<T> {
  return checked<T>(parseJson(await readFile(file, 'utf8'), file), file, check);
}

export function readJsonSync<T>(file: string, check?: Check): T {
  return checked<T>(parseJson(readFileSync(file, 'utf8'), file), file, check);
}

/** The records of a JSON Lines text, blank lines skipped; `shown` names the file in errors, with the line. */
export function parseJsonl<T>(text: string, shown: string, check?: Check): T[] {
  const out: T[] = [];
  text.split('\n').forEach((line, i) => {
    if (!line.trim()) return;
    let value: unknown;
    try {
      value = JSON.parse(line);
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
  return records.map((r) => JSON.stringify(r) + '\n').join('');
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
