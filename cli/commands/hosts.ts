// `mlepipe hosts`: the hosts in the settings, whether their engines answer,
// with their Docker version, the GPUs they lend and whether their image is there.
import { loadSettings } from '../../pipelines/config/settings.js';
import { DEFAULT_IMAGE } from '../../sandbox/backends/docker.js';
import { probeEngine } from '../../sandbox/hosts.js';
import type { IO } from '../io.js';

/** Exit 3 when a host does not answer or lacks its image. */
export async function hostsCommand(args: { json?: boolean }, io: IO): Promise<number> {
  const settings = await loadSettings(process.cwd(), io.env);
  const rows = await Promise.all(
    Object.entries(settings.hosts).map(async ([name, h]) => {
      const image = h.image ?? DEFAULT_IMAGE;
      return { name, docker: h.docker, gpus: h.gpus ?? 0, labels: h.labels ?? [], image, ...(await probeEngine(h.docker, 10_000, image)) };
    }),
  );
  if (args.json) io.out(JSON.stringify({ settings: settings.file ?? null, hosts: rows }, null, 2));
  else if (!rows.length) io.out(`no hosts: in ${settings.file ?? 'the settings (none found)'}`);
  else {
    const w = Math.max(...rows.map((r) => r.name.length));
    for (const r of rows) {
      const gpus = Array.isArray(r.gpus) ? `GPUs ${r.gpus.join(', ')}` : r.gpus === 'all' ? 'all GPUs' : `${r.gpus} GPU${r.gpus === 1 ? '' : 's'}`;
      const state = r.ok ? `✔ Docker ${r.version}, image ${r.image} ${r.imagePresent ? 'present' : 'missing'}` : `✖ unreachable: ${r.error}`;
      io.out(`${r.name.padEnd(w)}  ${r.docker}  ${gpus}${r.labels.length ? `  [${r.labels.join(', ')}]` : ''}  ${state}`);
    }
  }
  return rows.every((r) => r.ok && r.imagePresent) ? 0 : 3;
}
