// Parsed experiment files kept between runs. Parsing YAML with every value's
// position is the largest part of planning a large experiment, and the file
// rarely changes between two commands; the parse is stored under the cache
// root (parsed/, one entry per file, replaced when its text changes) and
// read back when the text is the same byte for byte.
import { join, resolve } from 'node:path';
import { exists, writeFileAtomic } from '../../core/fs.js';
import { sha256 } from '../../core/hash.js';
import { isObject, readJson, type Check } from '../../core/json-files.js';
import type { Origins, Sourced } from '../../core/source.js';
import { readTextFile } from '../../core/text.js';
import { VERSION } from '../../core/version.js';
import { parseYaml } from './yaml.js';

// Bump when what parseYaml returns changes shape or meaning.
const FORMAT = 1;

interface Entry {
  digest: string;
  value: unknown;
  origins: [string, unknown][];
}

const isEntry: Check = (v) => {
  const e = v as Partial<Entry>;
  return isObject(v) ?? (typeof e.digest === 'string' && Array.isArray(e.origins) ? undefined : 'not a stored parse');
};

/**
 * readYamlFile through the store under `cacheRoot` (when given and it exists:
 * commands that only read never create the cache). A file that does not
 * parse is not stored; its errors are found again each time.
 */
export async function readYamlFileCached(file: string, cacheRoot: string | undefined): Promise<Sourced> {
  const text = await readTextFile(file);
  if (!cacheRoot || !(await exists(cacheRoot))) return parseYaml(text, file);
  // The file's name as written is part of every origin, so it is part of the key.
  const path = join(cacheRoot, 'parsed', `${sha256(`${resolve(file)}\u0000${file}`)}.json`);
  const digest = sha256(JSON.stringify([FORMAT, VERSION, file, text]));
  // An entry that is missing or damaged is only a parse to make again.
  const stored = await readJson<Entry>(path, isEntry).catch(() => undefined);
  if (stored?.digest === digest) return { value: stored.value, origins: new Map(stored.origins) as Origins };
  const parsed = parseYaml(text, file);
  if (jsonSafe(parsed.value)) {
    const entry: Entry = { digest, value: parsed.value, origins: [...parsed.origins] };
    // Only a speed-up: a cache that cannot be written is no error.
    await writeFileAtomic(path, JSON.stringify(entry)).catch(() => undefined);
  }
  return parsed;
}

/** Whether JSON gives the value back as it is (YAML also has .inf, .nan and -0). */
function jsonSafe(v: unknown): boolean {
  if (typeof v === 'number') return Number.isFinite(v) && !Object.is(v, -0);
  if (v === null || typeof v === 'string' || typeof v === 'boolean') return true;
  if (Array.isArray(v)) return v.every(jsonSafe);
  if (typeof v === 'object' && Object.getPrototypeOf(v) === Object.prototype)
    return Object.values(v as object).every(jsonSafe);
  return false;
}
