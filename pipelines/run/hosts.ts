// GPUs as resources: each host lends its GPUs (ids where it lists them, a
// count otherwise); a node placed with `on:` starts only once a matching
// host has enough free, and gives them back when it ends. Hosts with
// `gpus: all` are not counted: the engine shares them out.
import type { HostPlacement } from '../../stages/contract.js';
import { gpuCapacity, hostsFor } from '../config/hosts.js';
import type { HostSettings } from '../config/types.js';

export interface Held {
  placement: HostPlacement;
  give(): void;
}

export class HostPool {
  private readonly free = new Map<string, { ids?: string[]; count: number }>();

  constructor(private readonly hosts: Readonly<Record<string, HostSettings>>) {
    for (const [name, h] of Object.entries(hosts)) {
      const ids = Array.isArray(h.gpus) ? [...h.gpus] : typeof h.gpus === 'number' ? Array.from({ length: h.gpus }, (_, i) => String(i)) : undefined;
      this.free.set(name, { ids, count: gpuCapacity(h) });
    }
  }

  /** GPUs on the first matching host with enough free, or undefined when none has them now. */
  take(on: string, gpus: number): Held | undefined {
    for (const name of hostsFor(on, this.hosts)) {
      const f = this.free.get(name)!;
      if (f.count < gpus) continue;
      f.count -= gpus;
      const ids = f.ids?.splice(0, gpus);
      const h = this.hosts[name];
      const all = Array.isArray(h.gpus) ? h.gpus : [];
      const order = (id: string) => (Array.isArray(h.gpus) ? all.indexOf(id) : Number(id));
      const placement: HostPlacement = {
        name,
        docker: h.docker,
        image: h.image,
        env: Object.fromEntries(Object.entries(h.env ?? {}).map(([k, v]) => [k, String(v)])),
        gpus: gpus === 0 ? undefined : ids ? { ids } : { count: gpus },
      };
      let given = false;
      return {
        placement,
        give: () => {
          if (given) return;
          given = true;
          f.count += gpus;
          // Back in the host's order, so that the lowest free ids go first.
          if (ids) f.ids!.splice(0, Infinity, ...[...f.ids!, ...ids].sort((x, y) => order(x) - order(y)));
        },
      };
    }
    return undefined;
  }
}
