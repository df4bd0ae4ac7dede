// A CSV file's column names, read by the CSV parser: a quoted header cell may
// hold a comma, a quote or a line break, which splitting the first line on
// commas would get wrong.
import { parse } from 'csv-parse/sync';
import { readFile } from 'node:fs/promises';

/** The column names in the header row of `text` (empty for an empty text). */
export function csvColumns(text: string): string[] {
  const rows = parse(text, { to_line: 1, bom: true, relax_column_count: true, trim: true }) as string[][];
  return rows[0] ?? [];
}

/** The column names of a CSV file, or null when it cannot be read. */
export async function csvHeader(path: string): Promise<string[] | null> {
  const text = await readFile(path, 'utf8').catch(() => null);
  return text === null ? null : csvColumns(text);
}
