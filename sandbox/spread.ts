// Sessions spread over several sandboxes, one per host: each session opens on
// the one with the fewest sessions open at that moment. A host whose engine
// cannot open a session takes no more from this sandbox, and the session opens
// on another, so a lost host costs the node only the runs it held.
import { EnvError } from '../core/errors.js';
import type { Sandbox } from './index.js';
import type { Session, SessionOptions } from './types.js';

export interface HostSandbox {
  readonly name: string;
  readonly box: Sandbox;
}

/** `log` gets warnings, and at shutdown how many sessions each host served. */
export function spreadSandbox(hosts: readonly HostSandbox[], log: (message: string) => void): Sandbox {
  if (!hosts.length) throw new EnvError('no host to run the sandboxes on');
  const open = new Map(hosts.map((h) => [h.name, 0]));
  const served = new Map(hosts.map((h) => [h.name, 0]));
  const down = new Map<string, string>();
  return {
    name: hosts[0].box.name,
    async open(o: SessionOptions): Promise<Session> {
      // Ties go to the host listed first, so a run of opens alternates between equally loaded hosts.
      const order = hosts.filter((h) => !down.has(h.name)).sort((a, b) => open.get(a.name)! - open.get(b.name)!);
      for (const h of order) {
        open.set(h.name, open.get(h.name)! + 1);
        let session: Session;
        try {
          session = await h.box.open(o);
        } catch (err) {
          open.set(h.name, open.get(h.name)! - 1);
          if (!(err instanceof EnvError) || o.signal?.aborted) throw err;
          down.set(h.name, err.message);
          log(`warning: host ${h.name} could not open a sandbox (${err.message}); its sessions go to the other hosts`);
          continue;
        }
        served.set(h.name, served.get(h.name)! + 1);
        let closed = false;
        return {
          backend: session.backend,
          workspace: session.workspace,
          run: (step, limits) => session.run(step, limits),
          close: async () => {
            if (!closed) open.set(h.name, open.get(h.name)! - 1);
            closed = true;
            await session.close();
          },
        };
      }
      throw new EnvError(`no sandbox host could open a session: ${[...down].map(([n, why]) => `${n}: ${why}`).join('; ')}`);
    },
    shutdown: async () => {
      log(`sessions per host: ${hosts.map((h) => `${h.name} ${served.get(h.name)}`).join(', ')}`);
      await Promise.all(hosts.map((h) => h.box.shutdown()));
    },
    jails: () => hosts.reduce((t, h) => ({ started: t.started + h.box.jails().started, reused: t.reused + h.box.jails().reused }), { started: 0, reused: 0 }),
  };
}
