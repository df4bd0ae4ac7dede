// A host that mounts this machine's cache (cache_dir): a shell node's input entries and its staging folder
// reach the container as bind mounts instead of archives, once a marker shows the mount is really this cache.
import { randomBytes } from 'node:crypto';
import { rm, writeFile } from 'node:fs/promises';
import { isAbsolute, join, posix, relative, sep } from 'node:path';
import type { Readable } from 'node:stream';
import { HostFault, InternalError } from '../../core/errors.js';
import type { Container } from '../../sandbox/containers.js';
import type { HostPlacement, StageContext } from '../contract.js';
import type { ShellParams } from './index.js';

/** Where the node's folders are inside its container. */
export const ROOT = '/mlepipe';

/**
 * Binds for a host that mounts this machine's cache at `cacheDir`: each input
 * entry read-only, the node's staging folder as its output folder.
 */
export function sharedMounts(ctx: StageContext<ShellParams>, cacheDir: string): string[] {
  const there = (local: string) => {
    const rel = relative(ctx.cacheRoot, local);
    if (rel.startsWith('..') || isAbsolute(rel))
      throw new InternalError(`${local} is not in the cache ${ctx.cacheRoot}, which cache_dir mirrors`);
    return posix.join(cacheDir, ...rel.split(sep));
  };
  return [...ctx.inputs.map((inp, i) => `${there(inp.dir)}:${ROOT}/in/${i}:ro`), `${there(ctx.outDir)}:${ROOT}/out`];
}

/**
 * A cache_dir that is not this machine's cache would hand the node empty
 * folders (the engine makes missing bind sources): a marker written into the
 * staging folder here must be seen in the created container before it starts.
 */
export async function checkShared(c: Container, outDir: string, host: HostPlacement): Promise<void> {
  const token = randomBytes(12).toString('hex');
  const marker = join(outDir, '.mlepipe-shared');
  await writeFile(marker, token);
  try {
    const seen = await c.raw.getArchive({ path: `${ROOT}/out/.mlepipe-shared` }).then(
      async (archive) => {
        const chunks: Buffer[] = [];
        for await (const chunk of archive as unknown as Readable) chunks.push(chunk as Buffer);
        return Buffer.concat(chunks).includes(token);
      },
      () => false,
    );
    if (!seen)
      throw new HostFault(
        host.name,
        `host ${host.name}: cache_dir ${host.cacheDir} there does not hold this machine's cache (a file written to ${outDir} did not appear in the node's output folder)`,
      );
  } finally {
    await rm(marker, { force: true });
  }
}
