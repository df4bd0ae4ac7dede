// Reading text and JSON that a user wrote or supplied, so that a bad file is a
// positioned UserError (FILE:LINE:COL) and never an internal error or a value
// silently changed: bytes that are not UTF-8 are refused, not replaced.
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { UserError, type SourcePos } from './errors.js';

/** 1-based line and column (in UTF-16 units, like the YAML positions) of `offset` in `text`. */
export function positionAt(text: string, offset: number, file: string): SourcePos {
  let line = 1;
  let lineStart = 0;
  for (let i = text.indexOf('\n'); i >= 0 && i < offset; i = text.indexOf('\n', i + 1)) {
    line++;
    lineStart = i + 1;
  }
  return { file, line, col: offset - lineStart + 1 };
}

const strict = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });
const lenient = new TextDecoder('utf-8', { ignoreBOM: true });

/** Decodes UTF-8 (a byte-order mark is dropped); refuses the first byte that is not UTF-8, positioned. */
export function decodeUtf8(bytes: Uint8Array, file: string): string {
  try {
    return strict.decode(bytes);
  } catch {
    // Where: the lenient decoding agrees with the bytes up to the first
    // replacement character that was not written as U+FFFD itself.
    const text = lenient.decode(bytes);
    const bom = text.charCodeAt(0) === 0xfeff ? 1 : 0;
    let byteOffset = 0;
    let from = bom;
    for (let i = text.indexOf('\uFFFD', from); i >= 0; i = text.indexOf('\uFFFD', from)) {
      byteOffset += Buffer.byteLength(text.slice(from, i));
      if (!(bytes[byteOffset] === 0xef && bytes[byteOffset + 1] === 0xbf && bytes[byteOffset + 2] === 0xbd)) {
        const hex = bytes[byteOffset].toString(16).toUpperCase().padStart(2, '0');
        const pos = positionAt(text.slice(bom), i - bom, file);
        throw new UserError([
          { pos, message: `not valid UTF-8 (byte 0x${hex} at offset ${byteOffset}); save the file as UTF-8` },
        ]);
      }
      byteOffset += 3;
      from = i + 1;
    }
    throw new UserError([{ pos: { file, line: 1, col: 1 }, message: 'not valid UTF-8; save the file as UTF-8' }]);
  }
}

/** A text file, strictly UTF-8; a missing or unreadable file is a UserError naming it. */
export async function readTextFile(file: string): Promise<string> {
  let bytes: Buffer;
  try {
    bytes = await readFile(file);
  } catch (err) {
    throw unreadable(file, err);
  }
  return decodeUtf8(bytes, file);
}

export function readTextFileSync(file: string): string {
  let bytes: Buffer;
  try {
    bytes = readFileSync(file);
  } catch (err) {
    throw unreadable(file, err);
  }
  return decodeUtf8(bytes, file);
}

function unreadable(file: string, err: unknown): UserError {
  const code = (err as NodeJS.ErrnoException).code;
  return new UserError(`${file}: ${code === 'ENOENT' ? 'no such file' : `cannot read (${code})`}`);
}

/** JSON.parse, with a failure reported at the character where the text stops being JSON. */
export function parseJson(text: string, file: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    const at = jsonErrorOffset(text);
    const what =
      at >= text.length
        ? 'unexpected end of file'
        : text[at] === '"'
          ? 'a string that is not closed, or holds a bad escape or a raw control character'
          : `unexpected ${JSON.stringify(text[at])}`;
    throw new UserError([{ pos: positionAt(text, at, file), message: `not valid JSON: ${what}` }]);
  }
}

export async function readJsonFile(file: string): Promise<unknown> {
  return parseJson(await readTextFile(file), file);
}

export function readJsonFileSync(file: string): unknown {
  return parseJson(readTextFileSync(file), file);
}

const STRING = /"(?:[^"\\\u0000-\u001f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"/y;
const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const LITERAL = /true|false|null/y;

/**
 * The offset of the first character at which `text` stops being valid JSON
 * (JSON.parse says what went wrong but not always where). A scan with an
 * explicit stack, so that deep nesting cannot overflow it.
 */
export function jsonErrorOffset(text: string): number {
  let i = 0;
  const stack: string[] = [];
  let want: 'value' | 'key' | 'after' = 'value';
  let justOpened = false;
  const take = (re: RegExp) => {
    re.lastIndex = i;
    if (!re.test(text)) return false;
    i = re.lastIndex;
    return true;
  };
  const blanks = () => {
    while (i < text.length && ' \t\n\r'.includes(text[i])) i++;
  };
  for (;;) {
    blanks();
    const c = text[i];
    const top = stack.at(-1);
    const close = top === '{' ? '}' : ']';
    if (want === 'after') {
      if (top === undefined) return i;
      if (c === ',') want = top === '{' ? 'key' : 'value';
      else if (c === close) stack.pop();
      else return i;
      i++;
      continue;
    }
    if (justOpened && c === close) {
      i++;
      stack.pop();
      want = 'after';
      justOpened = false;
      continue;
    }
    justOpened = false;
    if (want === 'key') {
      if (!take(STRING)) return i;
      blanks();
      if (text[i] !== ':') return i;
      i++;
      want = 'value';
    } else if (c === '{' || c === '[') {
      stack.push(c);
      i++;
      want = c === '{' ? 'key' : 'value';
      justOpened = true;
    } else if (take(STRING) || take(NUMBER) || take(LITERAL)) {
      want = 'after';
    } else {
      return i;
    }
  }
}
