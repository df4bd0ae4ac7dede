// Sessions spread over several sandboxes, one per host: each session opens on
// the one with the fewest sessions open at that moment, among those with room
// (a host holds as many runs at once as it has GPUs for); with none, it waits
// for a session to close. A host whose engine cannot open a session takes no
// more from this sandbox, and the session opens on another. A host lost under
// a session's step (HostFault) is taken out the same way: its sessions fail
// with that fault, and their runs, started again, open on the other hosts
// (stages/eval/rollout.ts), so a lost host costs the node only the runs it held.
import { EnvError, HostFault } from '../core/errors.js';
import type { Sandbox } from './index.js';
import type { Session, SessionOptions } from './types.js';

export interface HostSandbox {
  readonly name: string;
  readonly box: Sandbox;
  /** Sessions it holds at once (default: no limit). */
  readonly slots?: number;
}

/** `log` gets warnings, and at shutdown how many sessions each host served. */
export function spreadSandbox(hosts: readonly HostSandbox[], log: (message: string) => void): Sandbox {
  if (!hosts.length) throw new EnvError('no host to run the sandboxes on');
  const spread = new Spread(hosts, log);
  return {
    name: hosts[0].box.name,
    open: (o) => spread.open(o),
    shutdown: () => spread.shutdown(),
    jails: () =>
      hosts.reduce(
        (t, h) => ({
          started: t.started + h.box.jails().started,
          handed: t.handed + h.box.jails().handed,
          reused: t.reused + h.box.jails().reused,
        }),
        { started: 0, handed: 0, reused: 0 },
      ),
  };
}

/** The hosts' counts of open, served and lost sessions, the hosts taken out, and the opens waiting for room. */
class Spread {
  private readonly opened: Map<string, number>;
  private readonly served: Map<string, number>;
  private readonly down = new Map<string, string>();
  /** Sessions whose host was lost under them (their runs start again elsewhere). */
  private readonly lost: Map<string, number>;
  /** Opens waiting for room on some host, woken as sessions close. */
  private wake: Array<() => void> = [];

  constructor(
    private readonly hosts: readonly HostSandbox[],
    private readonly log: (message: string) => void,
  ) {
    this.opened = new Map(hosts.map((h) => [h.name, 0]));
    this.served = new Map(hosts.map((h) => [h.name, 0]));
    this.lost = new Map(hosts.map((h) => [h.name, 0]));
  }

  async open(o: SessionOptions): Promise<Session> {
    const { hosts, down, opened } = this;
    for (;;) {
      o.signal?.throwIfAborted();
      const up = hosts.filter((h) => !down.has(h.name));
      // Ties go to the host listed first, so a run of opens alternates between equally loaded hosts.
      const order = up
        .filter((h) => opened.get(h.name)! < (h.slots ?? Infinity))
        .sort((a, b) => opened.get(a.name)! - opened.get(b.name)!);
      if (!order.length && up.length) {
        await this.waitForRoom(o.signal);
        continue;
      }
      const s = await this.openOn(order, o);
      if (s) return s;
      if (!hosts.some((h) => !down.has(h.name))) break;
    }
    // In the settings' order, whichever failed first.
    throw new EnvError(
      `no sandbox host could open a session: ${hosts.map((h) => `${h.name}: ${down.get(h.name)}`).join('; ')}`,
    );
  }

  async shutdown(): Promise<void> {
    const { hosts, served, lost } = this;
    this.log(
      `sessions per host: ${hosts.map((h) => `${h.name} ${served.get(h.name)}${lost.get(h.name) ? ` (${lost.get(h.name)} lost with the host)` : ''}`).join(', ')}`,
    );
    await Promise.all(hosts.map((h) => h.box.shutdown()));
  }

  private roomMade(): void {
    for (const w of this.wake.splice(0)) w();
  }

  private waitForRoom(signal?: AbortSignal): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const done = () => {
        signal?.removeEventListener('abort', stop);
        resolve();
      };
      const stop = () => {
        this.wake = this.wake.filter((w) => w !== done);
        reject(signal!.reason);
      };
      this.wake.push(done);
      signal?.addEventListener('abort', stop, { once: true });
    });
  }

  /** Takes a host out: no more sessions open there, and its spare jails stop. */
  private takeDown(h: HostSandbox, why: string): void {
    if (this.down.has(h.name)) return;
    this.down.set(h.name, why);
    this.log(`warning: host ${h.name} was lost under a run (${why}); its runs start again on the other hosts`);
    void h.box.shutdown();
    this.roomMade();
  }

  private count(counts: Map<string, number>, h: HostSandbox, by: number): void {
    counts.set(h.name, counts.get(h.name)! + by);
  }

  /** The session on the first host of `order` that opens one; undefined when none did (each is then down). */
  private async openOn(order: readonly HostSandbox[], o: SessionOptions): Promise<Session | undefined> {
    for (const h of order) {
      this.count(this.opened, h, 1);
      let session: Session;
      try {
        session = await h.box.open(o);
      } catch (err) {
        this.count(this.opened, h, -1);
        if (!(err instanceof EnvError) || o.signal?.aborted) throw err;
        this.down.set(h.name, err.message);
        this.log(
          `warning: host ${h.name} could not open a sandbox (${err.message}); its sessions go to the other hosts`,
        );
        continue;
      }
      this.count(this.served, h, 1);
      return this.watched(h, session);
    }
    // Hosts that went down make no room, but whoever waits must learn that none is left.
    this.roomMade();
    return undefined;
  }

  /** The session as its caller gets it: a lost host is taken out, and its close makes room. */
  private watched(h: HostSandbox, session: Session): Session {
    let closed = false;
    return {
      backend: session.backend,
      workspace: session.workspace,
      run: (step, limits) =>
        session.run(step, limits).catch((err: unknown) => {
          if (err instanceof HostFault && err.host === h.name) {
            this.count(this.lost, h, 1);
            this.takeDown(h, err.message);
          }
          throw err;
        }),
      // The room is made once the session has closed: its jail's GPUs are free by then.
      close: async () => {
        if (closed) return;
        closed = true;
        try {
          await session.close();
        } finally {
          this.count(this.opened, h, -1);
          this.roomMade();
        }
      },
    };
  }
}
