// A `hosts:` entry of the settings, resolved once when the settings load: what the scheduler, the placement checks
// and the commands need from it (paths, GPUs, sizes) in the one form they all read.
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import type { ResolvedHost, WrittenHost } from './types.js';

/** The host as the engine works from it; relative key and certificate paths start at `base` (the settings' folder). */
export function resolveHost(h: WrittenHost, base: string): ResolvedHost {
  const abs = (p: string) => (p === '~' || p.startsWith('~/') ? join(homedir(), p.slice(1)) : resolve(base, p));
  const { shm_size, ...rest } = h;
  const gpuIds = lentIds(h.gpus);
  // Settings a host leaves out stay out of its resolved form (rather than present as undefined).
  return {
    ...rest,
    ...(h.identity && { identity: abs(h.identity) }),
    ...(h.known_hosts && { known_hosts: abs(h.known_hosts) }),
    ...(h.tls && { tls: { ca: abs(h.tls.ca), cert: abs(h.tls.cert), key: abs(h.tls.key) } }),
    ...(gpuIds !== undefined && { gpuIds }),
    ...(shm_size !== undefined && { shmSize: sizeBytes(shm_size) }),
  };
}

/** The device ids a host lends: its list, or 0 to N-1 for a count N; 'all' is not counted. */
function lentIds(gpus: WrittenHost['gpus']): ResolvedHost['gpuIds'] {
  if (gpus === undefined || gpus === 'all') return gpus;
  if (Array.isArray(gpus)) return [...gpus];
  return Array.from({ length: gpus }, (_, i) => String(i));
}

const UNITS: Record<string, number> = { '': 1, b: 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3, t: 1024 ** 4 };

/** Bytes of a size as Docker writes them (16g, 512m, 1.5GiB): binary units; the schema has checked the form. */
export function sizeBytes(size: number | string): number {
  if (typeof size === 'number') return size;
  const m = /^([0-9.]+)\s*([kmgt]?)/i.exec(size.trim())!;
  return Math.round(Number(m[1]) * UNITS[m[2].toLowerCase()]);
}

/** Host names `on:` matches: the host of that name, else every host carrying that label. */
export function hostsFor(on: string, hosts: Readonly<Record<string, ResolvedHost>>): string[] {
  if (hosts[on]) return [on];
  return Object.keys(hosts).filter((n) => hosts[n].labels?.includes(on));
}

/** GPUs a host lends: Infinity for `all` (not counted), 0 when it declares none. */
export function gpuCapacity(h: ResolvedHost): number {
  return h.gpuIds === 'all' ? Infinity : (h.gpuIds?.length ?? 0);
}

/** GPUs a node placed with `on:` takes unless it says: one where the matching hosts lend GPUs, none on CPU hosts. */
export function defaultGpus(on: string, hosts: Readonly<Record<string, ResolvedHost>>): number {
  return hostsFor(on, hosts).some((n) => gpuCapacity(hosts[n]) > 0) ? 1 : 0;
}
