// A Ray head on this machine, started for a run that names no cluster: its own ports (so that two heads on one
// machine do not fight over Ray's fixed ones), its own token, and a wait until jobs can be submitted to it.
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { EnvError } from '../../core/errors.js';
import { rayCli } from './ray.js';

/**
 * n distinct free loopback ports: every listener is open before any closes, so no two are the same (one at a
 * time, the system may hand back the port it was just given).
 */
async function freePorts(n: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from(
      { length: n },
      () =>
        new Promise<Server>((ok, fail) => {
          const srv = createServer();
          srv.once('error', fail);
          srv.listen(0, '127.0.0.1', () => ok(srv));
        }),
    ),
  );
  const ports = servers.map((s) => (s.address() as { port: number }).port);
  await Promise.all(servers.map((s) => new Promise((ok) => s.close(ok))));
  return ports;
}

/**
 * Ports Ray otherwise takes at fixed numbers (its client server 10001, the dashboard agent 52365): a second
 * head on the same machine, another node's or another user's, would fail to start on them. `extra` more free
 * ports come after them, all distinct.
 */
export async function ownPorts(extra = 0): Promise<{ args: string[]; agent: number; more: number[] }> {
  const [client, agent, ...more] = await freePorts(2 + extra);
  return {
    args: ['--ray-client-server-port', String(client), '--dashboard-agent-listen-port', String(agent)],
    agent,
    more,
  };
}

export interface LocalHead {
  /** The dashboard's address, where jobs are submitted. */
  address: string;
  /** The head's own authentication token: clients give it as RAY_AUTH_TOKEN (the head started with it). */
  token: string;
  stop(): Promise<void>;
}

/**
 * A Ray head on this machine with its job server, for a run that names no cluster. `--block` keeps
 * `ray start` in the foreground: stopping it stops every process of the head, and nobody else's.
 */
export async function startLocalHead(o: {
  cpus: number;
  gpus?: number;
  log: (line: string) => void;
  env?: Record<string, string>;
}): Promise<LocalHead> {
  const temp = await mkdtemp(join(tmpdir(), 'ray-'));
  const own = await ownPorts(3);
  const [gcs, dash, metrics] = own.more;
  const args = [
    'start',
    '--head',
    '--block',
    '--num-cpus',
    String(o.cpus),
    // A CPU run's one logical GPU: verl's resource pools ask Ray for GPU bundles (gpu/verl/cpu.ts).
    ...(o.gpus ? ['--num-gpus', String(o.gpus)] : []),
    '--node-ip-address',
    '127.0.0.1',
    '--port',
    String(gcs),
    '--dashboard-host',
    '127.0.0.1',
    '--dashboard-port',
    String(dash),
    '--include-dashboard',
    'true',
    ...own.args,
    '--temp-dir',
    temp,
    '--disable-usage-stats',
  ];
  // Ray's dashboard serves its own metrics on a fixed port (44227) unless told otherwise: two heads on one machine,
  // or a head beside a process whose ray.init started one, fought over it, and the loser's job agent could not listen.
  // Token authentication with a token of its own: the head runs the jobs it is given as this user, and the user's
  // ~/.ray/auth_token (if a local ray.init() wrote one) would otherwise turn authentication on with a token mlepipe
  // does not hold.
  const token = randomBytes(32).toString('hex');
  const env = {
    RAY_USAGE_STATS_ENABLED: '0',
    DASHBOARD_METRIC_PORT: String(metrics),
    RAY_AUTH_MODE: 'token',
    RAY_AUTH_TOKEN: token,
    ...o.env,
  };
  const head = execa(rayCli(), args, { reject: false, all: true, buffer: false, env });
  // The dashboard answers before the node itself is up; `ray start` says when it is, and a node that
  // timed out starting (a loaded machine) leaves a dashboard with no node behind.
  const heard = { said: '' };
  head.all?.on('data', (c: Buffer) => {
    heard.said = (heard.said + c.toString()).slice(-4000);
    c.toString()
      .split('\n')
      .filter(Boolean)
      .forEach((l) => o.log(`[ray head] ${l}`));
  });
  const address = `http://127.0.0.1:${dash}`;
  const stop = async () => {
    head.kill('SIGTERM');
    await head;
    await rm(temp, { recursive: true, force: true });
  };
  await waitForHead(head, heard, [`${address}/api/version`, `http://127.0.0.1:${own.agent}/`], async () => {
    await stop();
    const why = lastLines(heard.said, 2);
    throw new EnvError(`the local Ray head did not start${why ? `: ${why}` : ''} (ray start ${args.join(' ')})`);
  });
  return { address, token, stop };
}

/**
 * Ready once its node has started, its job server answers and so does the job agent submissions go to (the job
 * server otherwise refuses them for a while); `gaveUp` runs when the head exits first or two minutes pass.
 */
async function waitForHead(
  head: { exitCode: number | null },
  heard: { said: string },
  urls: readonly string[],
  gaveUp: () => Promise<never>,
): Promise<void> {
  const answers = (url: string) =>
    fetch(url).then(
      () => true,
      () => false,
    );
  for (let i = 0; ; i++) {
    let up = heard.said.includes('Ray runtime started');
    for (const url of urls) up = up && (await answers(url));
    if (up) return;
    if (head.exitCode !== null || i > 240) await gaveUp();
    await new Promise((r) => setTimeout(r, 500));
  }
}

/** The last n lines with something on them, trimmed and joined by spaces. */
function lastLines(text: string, n: number): string {
  return text
    .trim()
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
    .slice(-n)
    .join(' ');
}
