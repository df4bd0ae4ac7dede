// This machine's Docker engine made to look remote, for host tests: over TCP
// through a proxy on loopback (which also keeps the container specs it
// forwards, so that GPU requests can be checked without GPUs), over TLS
// through a terminating proxy, and over SSH through an sshd of the test's own.
import { execa } from 'execa';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { createServer as createTlsServer } from 'node:tls';
import { waitFor } from '../helpers.js';

/** Length of an HTTP/1.1 chunked body at the start of `b` (with its end marker), or -1 while incomplete. */
function chunkedLength(b: Buffer): number {
  let at = 0;
  for (;;) {
    const eol = b.indexOf('\r\n', at);
    if (eol < 0) return -1;
    const size = parseInt(b.subarray(at, eol).toString('latin1'), 16);
    at = eol + 2 + size + 2;
    if (at > b.length) return -1;
    if (size === 0) return at;
  }
}

/**
 * Pipes a client connection to the local engine's socket; `created` receives the bodies of container
 * creations, `requests` each request line, and `onRequest` sees each line before it goes on (to cut the
 * host at a chosen moment).
 */
function toEngine(
  client: Socket,
  open: Set<() => void>,
  created?: Array<Record<string, unknown>>,
  requests?: string[],
  onRequest?: (line: string) => void,
): void {
  const engine = connect('/var/run/docker.sock');
  let buf = Buffer.alloc(0);
  // Requests are read as they pass: keep-alive connections carry several, archives go chunked.
  if (created)
    client.on('data', (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk]);
      for (;;) {
        const end = buf.indexOf('\r\n\r\n');
        if (end < 0) return;
        const headers = buf.subarray(0, end).toString('latin1');
        const rest = buf.subarray(end + 4);
        const len = /transfer-encoding: *chunked/i.test(headers)
          ? chunkedLength(rest)
          : Number(/content-length: *(\d+)/i.exec(headers)?.[1] ?? 0);
        if (len < 0 || rest.length < len) return;
        requests?.push(headers.split('\r\n')[0]);
        onRequest?.(headers.split('\r\n')[0]);
        if (client.destroyed) return;
        if (/^POST \S*\/containers\/create/.test(headers))
          created.push(JSON.parse(rest.subarray(0, len).toString('utf8')));
        buf = rest.subarray(len);
      }
    });
  client.pipe(engine).pipe(client);
  const close = () => {
    client.destroy();
    engine.destroy();
    open.delete(close);
  };
  open.add(close);
  client.on('error', close);
  engine.on('error', close);
  client.on('close', close);
}

async function listening(server: Server, open: Set<() => void>) {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    port: (server.address() as { port: number }).port,
    /** Stops listening and drops every connection. */
    cut() {
      server.close();
      for (const close of [...open]) close();
    },
  };
}

/** A TCP listener on loopback piping to the local engine's socket. */
export async function engineProxy(
  created?: Array<Record<string, unknown>>,
  requests?: string[],
  onRequest?: (line: string) => void,
) {
  const open = new Set<() => void>();
  return listening(
    createServer((client) => toEngine(client, open, created, requests, onRequest)),
    open,
  );
}

/** TLS files made by openssl: a CA, the engine's certificate for 127.0.0.1, a client certificate, and a second CA that signed nothing. */
export async function makeCerts(dir: string) {
  const f = (n: string) => join(dir, n);
  const ssl = (...args: string[]) => execa('openssl', args, { cwd: dir });
  for (const ca of ['ca', 'other-ca']) {
    await ssl(
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-days',
      '2',
      '-subj',
      `/CN=${ca}`,
      '-keyout',
      `${ca}-key.pem`,
      '-out',
      `${ca}.pem`,
    );
  }
  await writeFile(f('server.ext'), 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n');
  await writeFile(f('client.ext'), 'extendedKeyUsage=clientAuth\n');
  for (const who of ['server', 'client']) {
    await ssl(
      'req',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-subj',
      `/CN=${who}`,
      '-keyout',
      `${who}-key.pem`,
      '-out',
      `${who}.csr`,
    );
    await ssl(
      'x509',
      '-req',
      '-in',
      `${who}.csr`,
      '-CA',
      'ca.pem',
      '-CAkey',
      'ca-key.pem',
      '-CAcreateserial',
      '-days',
      '2',
      '-extfile',
      `${who}.ext`,
      '-out',
      `${who}.pem`,
    );
  }
  return {
    ca: f('ca.pem'),
    otherCa: f('other-ca.pem'),
    cert: f('client.pem'),
    key: f('client-key.pem'),
    serverCert: f('server.pem'),
    serverKey: f('server-key.pem'),
  };
}

/** A TLS-terminating listener in front of the local engine, asking for a client certificate signed by the CA. */
export async function tlsEngineProxy(certs: Awaited<ReturnType<typeof makeCerts>>) {
  const open = new Set<() => void>();
  const [key, cert, ca] = await Promise.all([
    readFile(certs.serverKey),
    readFile(certs.serverCert),
    readFile(certs.ca),
  ]);
  const server = createTlsServer({ key, cert, ca, requestCert: true, rejectUnauthorized: true }, (client) =>
    toEngine(client, open),
  );
  server.on('tlsClientError', () => {});
  return listening(server as unknown as Server, open);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * Writes what the test's sshd reads into `dir`: its host key, a user key it lets in, a known_hosts naming the
 * host key at the loopback `port` (and an empty one), and its settings.
 */
async function writeSshdFiles(dir: string, port: number): Promise<void> {
  const f = (n: string) => join(dir, n);
  await execa('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', f('host_key')]);
  await execa('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', f('user_key')]);
  await writeFile(f('authorized_keys'), await readFile(f('user_key.pub')));
  const [type, blob] = (await readFile(f('host_key.pub'), 'utf8')).split(' ');
  await writeFile(f('known_hosts'), `[127.0.0.1]:${port} ${type} ${blob}\n`);
  await writeFile(f('empty_known_hosts'), '');
  await writeFile(
    f('sshd_config'),
    [
      `Port ${port}`,
      'ListenAddress 127.0.0.1',
      `HostKey ${f('host_key')}`,
      `PidFile ${f('sshd.pid')}`,
      `AuthorizedKeysFile ${f('authorized_keys')}`,
      'PubkeyAuthentication yes',
      'PasswordAuthentication no',
      'KbdInteractiveAuthentication no',
      'PermitRootLogin prohibit-password',
      'StrictModes no',
      'UsePAM no',
      '',
    ].join('\n'),
  );
}

/**
 * An sshd of the test's own on a loopback port: a generated host key, a
 * generated user key allowed for the current user, and a known_hosts file
 * naming the host key. `stop` kills it and every session it runs (the
 * `docker system dial-stdio` processes included), as a cut line would.
 */
export async function startSshd(port: number) {
  const dir = await mkdtemp(join(tmpdir(), 'mlepipe-sshd-'));
  const f = (n: string) => join(dir, n);
  await writeSshdFiles(dir, port);
  // sshd refuses to start without its privilege separation folder.
  await mkdir('/run/sshd', { recursive: true });
  let child: ChildProcess | undefined;
  let log = '';
  const start = async () => {
    log = '';
    child = spawn('/usr/sbin/sshd', ['-D', '-e', '-f', f('sshd_config')], { stdio: ['ignore', 'ignore', 'pipe'] });
    child.stderr!.on('data', (d) => (log += String(d)));
    await waitFor(
      () =>
        new Promise<boolean>((r) => {
          const s = connect(port, '127.0.0.1', () => (s.destroy(), r(true)));
          s.on('error', () => r(false));
        }),
      30_000,
      'sshd to listen',
    );
  };
  const stop = async () => {
    if (!child?.pid) return;
    const pids = await descendants(child.pid);
    const c = child;
    c.kill('SIGKILL');
    // As a cut line does, the sessions get a hangup first: a login shell's startup files may hold a lock
    // (pyenv's rehash does) that only an orderly exit removes, and a killed one would hang every later login.
    const signal = (sig: NodeJS.Signals) => {
      for (const pid of pids) {
        try {
          process.kill(pid, sig);
        } catch {
          // Already gone.
        }
      }
    };
    signal('SIGHUP');
    await waitFor(async () => pids.every((pid) => !isAlive(pid)), 5_000, 'the SSH sessions to hang up').catch(() => {});
    signal('SIGKILL');
    if (c.exitCode === null && c.signalCode === null) await new Promise((r) => c.once('exit', r));
    child = undefined;
  };
  await start();
  return {
    address: `ssh://${userInfo().username}@127.0.0.1:${port}`,
    identity: f('user_key'),
    /** A private key this sshd does not let in. */
    strangerKey: f('host_key'),
    knownHosts: f('known_hosts'),
    emptyKnownHosts: f('empty_known_hosts'),
    start,
    stop,
    /** Stops it and removes its keys and settings. */
    dispose: async () => {
      await stop();
      await rm(dir, { recursive: true, force: true });
    },
    log: () => log,
  };
}

/** The processes below `pid`, deepest last. */
async function descendants(pid: number): Promise<number[]> {
  const { stdout } = await execa('ps', ['-e', '-o', 'pid=,ppid=']);
  const kids = new Map<number, number[]>();
  for (const line of stdout.trim().split('\n')) {
    const [p, pp] = line.trim().split(/\s+/).map(Number);
    kids.set(pp, [...(kids.get(pp) ?? []), p]);
  }
  const out: number[] = [];
  const walk = (p: number) => {
    for (const k of kids.get(p) ?? []) {
      out.push(k);
      walk(k);
    }
  };
  walk(pid);
  return out;
}
