// HTTP to a Docker engine over SSH: one SSH connection per client, and each
// HTTP connection a `docker system dial-stdio` channel on it (what the docker
// CLI does for ssh:// hosts). docker-modem's own ssh mode opens a new SSH
// connection for every request, which the liveness pings of a running node
// would turn into a login every few seconds.
import { Agent, type ClientRequestArgs } from 'node:http';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { Client, ConnectConfig } from 'ssh2';

/** Idle time after the last channel closes before the SSH connection is ended (a new request reconnects). */
const IDLE_MS = 1000;

export class SshEngineAgent extends Agent {
  private conn?: Promise<Client>;
  private channels = 0;
  private idle?: NodeJS.Timeout;

  constructor(private readonly config: ConnectConfig) {
    super({ keepAlive: false });
  }

  private connect(): Promise<Client> {
    if (this.conn) return this.conn;
    const conn = (async () => {
      const c = await this.login();
      // A dropped connection is forgotten, so that the next request tries a new one.
      const forget = () => {
        if (this.conn === conn) this.conn = undefined;
      };
      c.on('error', forget);
      c.on('close', forget);
      return c;
    })();
    this.conn = conn;
    conn.catch(() => {
      if (this.conn === conn) this.conn = undefined;
    });
    return conn;
  }

  override createConnection(
    _options: ClientRequestArgs,
    callback?: (err: Error | null, stream: Duplex) => void,
  ): Duplex | undefined {
    clearTimeout(this.idle);
    this.connect().then(
      (c) =>
        c.exec('docker system dial-stdio', (err, channel) => {
          // ssh2 says only "Unable to exec" when the connection went away under it.
          if (err)
            return callback!(
              new Error(`the SSH connection to ${this.config.host} dropped (${err.message})`),
              undefined as never,
            );
          this.channels++;
          channel.once('close', () => this.closed());
          // http asks these of its sockets; a channel has no TCP options to set.
          const s = channel as unknown as Record<string, unknown>;
          for (const m of ['setNoDelay', 'setKeepAlive', 'setTimeout', 'ref', 'unref'])
            if (typeof s[m] !== 'function') s[m] = () => channel;
          // What the engine's side prints on stderr (docker CLI errors) would otherwise be lost.
          channel.stderr.on('data', () => {});
          callback!(null, channel);
        }),
      (err: Error) => callback!(err, undefined as never),
    );
    return undefined;
  }

  /**
   * A port on this machine's loopback that reaches PORT on the host's loopback over SSH (each TCP
   * connection a direct-tcpip channel), so a server on the host needs no port open to the network. The
   * tunnel has an SSH connection of its own, ended with it: the engine's requests come and go on theirs.
   */
  async forward(port: number): Promise<{ url: string; close(): Promise<void> }> {
    const ssh = await this.login();
    ssh.on('error', () => {});
    const sockets = new Set<Socket>();
    const server = createServer((socket) => {
      sockets.add(socket);
      socket.once('close', () => sockets.delete(socket));
      socket.on('error', () => {});
      ssh.forwardOut('127.0.0.1', 0, '127.0.0.1', port, (err, channel) => {
        if (err) return void socket.destroy();
        channel.on('error', () => socket.destroy());
        channel.once('close', () => socket.destroy());
        socket.once('close', () => channel.destroy());
        socket.pipe(channel).pipe(socket);
      });
    });
    await new Promise<void>((ok, fail) => {
      server.once('error', fail);
      server.listen(0, '127.0.0.1', () => ok());
    });
    return {
      url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      // Kept-alive client connections would hold the server open: they go with it, and so does the login.
      close: () =>
        new Promise<void>((ok) => {
          server.close(() => ok());
          for (const s of sockets) s.destroy();
          ssh.end();
        }),
    };
  }

  /** A new SSH connection, once it is ready. */
  private async login(): Promise<Client> {
    const { Client } = await import('ssh2');
    const c = new Client();
    // ssh2 can emit a second error for one failed login: a reset socket gives ECONNRESET and then, as
    // it closes, "Connection lost before handshake". An error with no listener would end the process,
    // so this listener stays for the client's life (callers add their own) and the login fails only
    // once the socket has closed, with the first error, the one that names the cause.
    let first: Error | undefined;
    c.on('error', (err: Error) => {
      first ??= err;
    });
    await new Promise<void>((ok, fail) => {
      const closed = () => fail(first ?? new Error(`the SSH connection to ${this.config.host} closed before login`));
      c.once('close', closed);
      c.once('ready', () => {
        c.off('close', closed);
        ok();
      });
      c.connect(this.config);
    });
    return c;
  }

  private closed(): void {
    if (--this.channels > 0) return;
    clearTimeout(this.idle);
    this.idle = setTimeout(() => {
      const conn = this.conn;
      this.conn = undefined;
      void conn?.then(
        (c) => c.end(),
        () => {},
      );
    }, IDLE_MS);
    this.idle.unref();
  }
}
