import { isAbsolute, relative, resolve } from 'node:path';

/** A path as users typed it: relative to the working folder when inside it, else absolute. */
export function displayPath(file: string): string {
  const abs = resolve(file);
  const rel = relative(process.cwd(), abs);
  return rel && !rel.startsWith('..') && !isAbsolute(rel) ? rel : abs;
}
