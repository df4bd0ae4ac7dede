import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import stringify from 'safe-stable-stringify';

/** Canonical JSON: keys sorted at every level, so equal values hash equally. */
export function canonicalJson(value: unknown): string {
  const s = stringify(value);
  if (s === undefined) throw new TypeError('value has no JSON form');
  return s;
}

export function sha256(data: string | Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

export function hashFile(path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const h = createHash('sha256');
    createReadStream(path)
      .on('data', (chunk) => h.update(chunk))
      .on('error', reject)
      .on('end', () => resolve(h.digest('hex')));
  });
}
