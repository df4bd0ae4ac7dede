// `mlepipe hosts`: the hosts in the settings, whether their engines answer,
// with their Docker version, the GPUs they lend, the GPUs nvidia-smi sees
// there and whether their image is there. `mlepipe hosts build NAME` builds
// the image nodes run in on that host's engine.
import { existsSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { packageRoot } from '../../core/assets.js';
import { UserError } from '../../core/errors.js';
import { readJsonSync } from '../../core/json-files.js';
import { parseOverrides } from '../../pipelines/config/overrides.js';
import { loadSettings } from '../../pipelines/config/settings.js';
import type { ResolvedHost } from '../../pipelines/config/types.js';
import { DEFAULT_IMAGE } from '../../sandbox/containers.js';
import { buildOn } from '../../sandbox/host-build.js';
import { gpusOn, probeEngine, type GpuReport } from '../../sandbox/hosts.js';
import type { IO } from '../io.js';

const lends = (h: ResolvedHost) => h.gpuIds === 'all' || !!h.gpuIds?.length;

/** Exit 3 when a host does not answer, lacks its image, or lends GPUs nvidia-smi does not see there. */
export async function hostsCommand(args: { json?: boolean; set?: string[] }, io: IO): Promise<number> {
  const settings = await loadSettings(process.cwd(), io.env, parseOverrides(args.set ?? []));
  const rows = await Promise.all(
    Object.entries(settings.hosts).map(async ([name, h]) => {
      const image = h.image ?? DEFAULT_IMAGE;
      const probe = await probeEngine(h, 10_000, image);
      // Only hosts that lend GPUs are asked: elsewhere a container that cannot get any says nothing new.
      const seen: GpuReport | undefined =
        probe.ok && probe.imagePresent && lends(h) ? await gpusOn(h, image) : undefined;
      return {
        name,
        docker: h.docker,
        gpus: h.gpus ?? 0,
        labels: h.labels ?? [],
        image,
        ...probe,
        ...(seen && { seen }),
      };
    }),
  );
  if (args.json) io.out(JSON.stringify({ settings: settings.file ?? null, hosts: rows }, null, 2));
  else if (!rows.length) io.out(`no hosts: in ${settings.file ?? 'the settings (none found)'}`);
  else {
    const w = Math.max(...rows.map((r) => r.name.length));
    for (const r of rows) {
      const gpus = Array.isArray(r.gpus)
        ? `GPUs ${r.gpus.join(', ')}`
        : r.gpus === 'all'
          ? 'all GPUs'
          : `${r.gpus} GPU${r.gpus === 1 ? '' : 's'}`;
      const state = r.ok
        ? `✔ Docker ${r.version}, image ${r.image} ${r.imagePresent ? 'present' : 'missing'}`
        : `✖ unreachable: ${r.error}`;
      io.out(
        `${r.name.padEnd(w)}  ${r.docker}  ${gpus}${r.labels.length ? `  [${r.labels.join(', ')}]` : ''}  ${state}`,
      );
      if (r.seen?.gpus) {
        const free = r.seen.gpus.filter((g) => !g.busy).length;
        io.out(
          `${' '.repeat(w)}  nvidia-smi: ${r.seen.gpus.length} GPU${r.seen.gpus.length === 1 ? '' : 's'}, ${free} free now: ${r.seen.gpus.map((g) => `${g.index} ${g.name} ${Math.round(g.memoryMiB / 1024)} GiB${g.busy ? ' (busy)' : ''}`).join('; ')}`,
        );
      } else if (r.seen) io.out(`${' '.repeat(w)}  ✖ ${r.seen.error}`);
    }
  }
  return rows.every((r) => r.ok && r.imagePresent && !r.seen?.error) ? 0 : 3;
}

/**
 * Builds an image on a host's engine: by default gpu/Dockerfile, with what
 * the mlepipe package ships (and the worker) as the context; with `--file`,
 * that Dockerfile with its own folder as the context. Tagged as the host's
 * `image:` unless `--tag` says otherwise.
 */
export async function hostsBuildCommand(
  name: string,
  args: { file?: string; tag?: string; set?: string[] },
  io: IO,
): Promise<number> {
  const settings = await loadSettings(process.cwd(), io.env, parseOverrides(args.set ?? []));
  const host = settings.hosts[name];
  if (!host)
    throw new UserError(
      `no host named "${name}" in ${settings.file ?? 'the settings'} (hosts: ${Object.keys(settings.hosts).join(', ') || 'none'})`,
    );
  const tag = args.tag ?? host.image ?? 'mlepipe-host:latest';
  let context: string;
  let dockerfile: string;
  let entries: string[] | undefined;
  if (args.file) {
    const file = resolve(args.file);
    if (!existsSync(file)) throw new UserError(`--file ${args.file}: no such file`);
    context = dirname(file);
    dockerfile = relative(context, file);
  } else {
    // The build context of the default image: where mlepipe is installed.
    context = packageRoot();
    dockerfile = 'gpu/Dockerfile';
    const pkg = readJsonSync<{ files?: string[] }>(join(context, 'package.json'));
    // What an npm install of mlepipe holds, plus the worker and the lock files the image installs from.
    entries = ['package.json', 'package-lock.json', dockerfile, 'gpu/worker', ...(pkg.files ?? [])].filter((e) =>
      existsSync(join(context, e)),
    );
    if (!existsSync(join(context, 'dist', 'cli.js')))
      throw new UserError(`${context} has no dist/cli.js: run npm run build first`);
  }
  io.err(`building ${tag} on host ${name} (${host.docker}) from ${join(context, dockerfile)}`);
  const r = await buildOn(host, { context, dockerfile, entries, tag, signal: io.signal }, (line) => io.err(line));
  if (!r.ok) {
    io.err(`✖ host ${name}: the build failed: ${r.error}`);
    return 1;
  }
  io.err(
    `✔ built ${tag} on host ${name}${host.image === tag ? '' : `; nodes run in it once hosts.${name}.image is ${tag}`}`,
  );
  return 0;
}
