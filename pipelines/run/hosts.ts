// GPUs as resources: each host lends its GPUs (ids where it lists them, a
// count otherwise); a node placed with `on:` starts only once a matching
// host has enough free, and gives them back when it ends. A node's host
// sandboxes (`sandbox: { on:, gpus_per_run: }`) take theirs from the same
// pool when the node starts, so a trainer and the jails beside it on one host
// never get the same device. Hosts with `gpus: all` are not counted: the
// engine shares them out.
import type { HostPlacement, SandboxHost, StageContext } from '../../stages/contract.js';
import { gpuCapacity, hostsFor } from '../config/hosts.js';
import type { ResolvedHost, ResolvedStage } from '../config/types.js';

export { sizeBytes } from '../config/host-settings.js';

export interface Held {
  placement: HostPlacement;
  give(): void;
}

export class HostPool {
  private readonly free = new Map<string, { ids?: string[]; count: number }>();

  constructor(private readonly hosts: Readonly<Record<string, ResolvedHost>>) {
    for (const [name, h] of Object.entries(hosts)) {
      const ids = h.gpuIds === 'all' || h.gpuIds === undefined ? undefined : [...h.gpuIds];
      this.free.set(name, { ids, count: gpuCapacity(h) });
    }
  }

  /**
   * GPUs on the first matching host with enough free, or undefined when none has them now.
   * Hosts in `avoid` (they failed the node) are passed over while another matching host is left.
   */
  take(on: string, gpus: number, avoid?: ReadonlySet<string>): Held | undefined {
    const all = hostsFor(on, this.hosts);
    // A host that could never hold the node is no alternative: waiting for it would be forever.
    const fresh = all.filter((n) => !avoid?.has(n) && gpuCapacity(this.hosts[n]) >= gpus);
    for (const name of fresh.length ? fresh : all) {
      const f = this.free.get(name)!;
      if (f.count < gpus) continue;
      f.count -= gpus;
      const ids = f.ids?.splice(0, gpus);
      const h = this.hosts[name];
      // Settings a host leaves out stay out of its placement (rather than present as undefined).
      const placement = defined({
        name,
        docker: h.docker,
        identity: h.identity,
        known_hosts: h.known_hosts,
        tls: h.tls,
        image: h.image,
        shmSize: h.shmSize,
        cacheDir: h.cache_dir,
        env: Object.fromEntries(Object.entries(h.env ?? {}).map(([k, v]) => [k, String(v)])),
        gpus: gpus === 0 ? undefined : ids ? { ids } : { count: gpus },
      }) as HostPlacement;
      let given = false;
      return {
        placement,
        give: () => {
          if (given) return;
          given = true;
          if (ids) this.giveBack(name, ids);
          else f.count += gpus;
        },
      };
    }
    return undefined;
  }

  /**
   * GPUs for a node's sandboxes on `hosts`: from each in turn, whole runs of `perRun` of its free ids,
   * `runs` in all (the most the node holds open at once). Undefined when none is free now on a host that
   * lends enough for one (the node waits, as a node placed with `on:` does). Hosts with `gpus: all` lend
   * all, uncounted.
   */
  lendSandboxes(hosts: readonly string[], perRun: number, runs: number): LentGpus | undefined {
    const lent = new Map<string, string[] | 'all'>();
    const back: Array<() => void> = [];
    let left = runs;
    for (const name of hosts) {
      const h = this.hosts[name];
      if (h.gpuIds === 'all') {
        lent.set(name, 'all');
        continue;
      }
      const f = this.free.get(name)!;
      if (!f.ids) continue; // lends no GPUs: its jails could hold none
      const n = Math.min(Math.floor(f.count / perRun), left);
      const ids = f.ids!.splice(0, n * perRun);
      f.count -= ids.length;
      left -= n;
      lent.set(name, ids);
      back.push(() => this.giveBack(name, ids));
    }
    const some = [...lent.values()].some((v) => v === 'all' || v.length);
    if (!some) return undefined;
    let given = false;
    return {
      gpus: lent,
      give: () => {
        if (given) return;
        given = true;
        for (const b of back) b();
      },
    };
  }

  private giveBack(name: string, ids: readonly string[]): void {
    const f = this.free.get(name)!;
    const h = this.hosts[name];
    const lent = h.gpuIds as readonly string[];
    const order = (id: string) => lent.indexOf(id);
    f.count += ids.length;
    // Back in the host's order, so that the lowest free ids go first.
    f.ids!.splice(0, Infinity, ...[...f.ids!, ...ids].sort((x, y) => order(x) - order(y)));
  }
}

/** The GPU ids a node's sandboxes took on each host ('all': uncounted), given back once when the node ends. */
export interface LentGpus {
  readonly gpus: ReadonlyMap<string, readonly string[] | 'all'>;
  give(): void;
}

const defined = <T extends object>(o: T): T =>
  Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;

/** `sandbox: { on: }` as a stage sees it: the matching hosts with the GPUs they lend (`taken`: those the pool lent the node), and what each run holds. */
export function sandboxPlacement(
  sb: NonNullable<ResolvedStage['sandbox']>,
  hosts: Readonly<Record<string, ResolvedHost>>,
  taken?: LentGpus,
): Pick<StageContext<unknown>, 'sandboxHosts' | 'sandboxRun'> {
  const lent = (name: string) => (taken ? taken.gpus.get(name) : hosts[name].gpuIds);
  return {
    sandboxHosts: sb.hosts.map((name) => defined({ ...hosts[name], name, gpus: lent(name) }) as SandboxHost),
    sandboxRun: defined({ gpus: sb.gpusPerRun, cpus: sb.cpusPerRun }),
  };
}
