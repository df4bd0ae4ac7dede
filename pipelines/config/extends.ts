// Loads an experiment file and the chain of files it `extends`, refusing cycles.
import { realpath } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { displayPath } from '../../core/paths.js';
import { UserError } from '../../core/errors.js';
import { isPlainObject, mergeSourced } from './merge.js';
import { dropOrigins, valuePos, type Sourced } from '../../core/source.js';
import { readYamlFileCached } from './parsed.js';

/** `cacheRoot`: where parsed files are kept between runs (pipelines/config/parsed.ts), if anywhere. */
export async function loadWithExtends(file: string, chain: string[] = [], cacheRoot?: string): Promise<Sourced> {
  const real = await realpath(file).catch(() => resolve(file));
  const own = await readYamlFileCached(file, cacheRoot);
  if (!isPlainObject(own.value)) {
    throw new UserError([{ pos: { file, line: 1, col: 1 }, message: 'an experiment file must be a YAML mapping' }]);
  }
  const ext = own.value.extends;
  if (ext === undefined) return own;
  const parents = typeof ext === 'string' ? [ext] : Array.isArray(ext) ? ext : null;
  if (!parents || parents.some((p) => typeof p !== 'string')) {
    throw new UserError([
      {
        pos: valuePos(own.origins, ['extends']),
        path: 'extends',
        message: 'must be a relative path or a list of them',
      },
    ]);
  }
  let merged: Sourced | undefined;
  for (let i = 0; i < parents.length; i++) {
    const at = valuePos(own.origins, typeof ext === 'string' ? ['extends'] : ['extends', i]);
    const target = resolve(dirname(file), parents[i] as string);
    const targetReal = await realpath(target).catch(() => null);
    if (!targetReal) {
      throw new UserError([{ pos: at, path: 'extends', message: `no such file: ${parents[i]}` }]);
    }
    const seen = [...chain, real];
    if (seen.includes(targetReal)) {
      const cycle = [...seen.slice(seen.indexOf(targetReal)), targetReal].map((p) => displayPath(p));
      throw new UserError([{ pos: at, path: 'extends', message: `cycle: ${cycle.join(' → ')}` }]);
    }
    const base = await loadWithExtends(displayPath(target), seen, cacheRoot);
    merged = merged ? mergeSourced(merged, base) : base;
  }
  const ownWithout: Sourced = { value: { ...own.value }, origins: new Map(own.origins) };
  delete (ownWithout.value as Record<string, unknown>).extends;
  dropOrigins(ownWithout.origins, ['extends']);
  return mergeSourced(merged as Sourced, ownWithout);
}
