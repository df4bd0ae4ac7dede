// Docker engines on other machines (`hosts:` in the settings): a client for
// an engine's address, and a probe saying whether it answers and what it runs.
import type Docker from 'dockerode';
import { createHmac } from 'node:crypto';
import { EnvError, UserError } from '../core/errors.js';
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { createContainer, type Container } from './containers.js';
import { SshEngineAgent } from './ssh-engine.js';

/** How to reach an engine. Paths are absolute (the settings loader resolves them). */
export interface EngineSpec {
  /** The host's name in the settings, when the spec is one of them: errors the user can fix then name it. */
  readonly name?: string;
  /** unix:///PATH, tcp://HOST:PORT or ssh://USER@HOST[:PORT]. */
  readonly docker: string;
  /** ssh: the private key; without it, the key in the running agent (SSH_AUTH_SOCK). */
  readonly identity?: string;
  /** ssh: the known_hosts file the host's key must be in (default ~/.ssh/known_hosts). */
  readonly known_hosts?: string;
  /** tcp: the CA that signed the engine's certificate, and this client's certificate and key. */
  readonly tls?: { readonly ca: string; readonly cert: string; readonly key: string };
}

/** A client for the engine. Unreadable key or certificate files throw, naming the file. */
export async function engineAt(spec: EngineSpec | string): Promise<Docker> {
  const { default: Dockerode } = await import('dockerode');
  const s: EngineSpec = typeof spec === 'string' ? { docker: spec } : spec;
  const url = new URL(s.docker);
  if (url.protocol === 'unix:') return new Dockerode({ socketPath: url.pathname });
  if (url.protocol === 'tcp:') {
    const base = { host: url.hostname, port: Number(url.port) };
    if (!s.tls) return new Dockerode({ ...base, protocol: 'http' });
    return new Dockerode({
      ...base,
      protocol: 'https',
      ca: read(s, s.tls.ca, 'tls.ca'),
      cert: read(s, s.tls.cert, 'tls.cert'),
      key: read(s, s.tls.key, 'tls.key'),
    });
  }
  if (url.protocol === 'ssh:') {
    const port = Number(url.port || 22);
    const known = s.known_hosts ?? join(homedir(), '.ssh', 'known_hosts');
    const keys = knownKeys(known, url.hostname, port);
    if (!s.identity && !process.env.SSH_AUTH_SOCK)
      throw settingsError(
        s,
        `no SSH key: set identity: (a private key file) on the host, or start an SSH agent (SSH_AUTH_SOCK)`,
      );
    const agent = new SshEngineAgent({
      host: url.hostname,
      port,
      username: decodeURIComponent(url.username),
      ...(s.identity ? { privateKey: read(s, s.identity, 'identity') } : { agent: process.env.SSH_AUTH_SOCK }),
      // Without a check, anyone answering on that address would be handed the node's inputs and environment.
      hostVerifier: (key: Buffer) => keys.some((k) => k.equals(key)),
      readyTimeout: 20_000,
    });
    return new Dockerode({ protocol: 'http', host: url.hostname, port, agent } as Docker.DockerOptions);
  }
  throw settingsError(s, `${s.docker}: not a unix://, tcp:// or ssh:// address`);
}

/** A problem with a host's settings the user can fix, placed at the host when the spec names it. */
function settingsError(spec: EngineSpec, message: string): UserError {
  return new UserError([{ ...(spec.name !== undefined && { path: `hosts.${spec.name}` }), message }]);
}

/** The SSH connection under an ssh:// engine's client (undefined for other engines). */
export function sshAgentOf(docker: Docker): SshEngineAgent | undefined {
  const agent = (docker as unknown as { modem?: { agent?: unknown } }).modem?.agent;
  return agent instanceof SshEngineAgent ? agent : undefined;
}

function read(spec: EngineSpec, path: string, what: string): Buffer {
  try {
    return readFileSync(path);
  } catch (err) {
    const why = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
    throw settingsError(spec, `${what}: cannot read ${path} (${why})`);
  }
}

/** Public key blobs listed for HOST:PORT in a known_hosts file, plain or hashed entries. */
export function knownKeys(file: string, host: string, port: number): Buffer[] {
  let text = '';
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  const name = port === 22 ? host : `[${host}]:${port}`;
  const out: Buffer[] = [];
  for (const line of text.split('\n')) {
    const fields = line.trim().split(/\s+/);
    // Revoked keys and CA lines are left to ssh itself: neither may let a key in here.
    if (fields.length < 3 || fields[0].startsWith('#') || fields[0].startsWith('@')) continue;
    const [patterns, , blob] = fields;
    const matches = patterns.split(',').some((p) => {
      if (!p.startsWith('|1|')) return p === name;
      const [, , salt, hash] = p.split('|');
      return createHmac('sha1', Buffer.from(salt, 'base64')).update(name).digest('base64') === hash;
    });
    if (matches) out.push(Buffer.from(blob, 'base64'));
  }
  return out;
}

/** One line saying why an engine could not be reached, with the setting to look at for TLS and SSH failures. */
export function engineProblem(err: Error & { code?: string; level?: string }, spec: EngineSpec): string {
  const first = err.message.split('\n')[0];
  const code = err.code ?? '';
  if (/CERT|SELF_SIGNED|UNABLE_TO_VERIFY|ERR_TLS|ERR_SSL/.test(code) || /certificate|ssl3?_|tls/i.test(first)) {
    return `TLS failed (${code || first}): check tls.ca/cert/key against the engine's certificates${code ? ` (${first})` : ''}`;
  }
  if (/Host denied/.test(first)) {
    const url = new URL(spec.docker);
    const file = spec.known_hosts ?? '~/.ssh/known_hosts';
    return `the SSH host key of ${url.host} is not in ${file} (check it, then: ssh-keyscan -p ${url.port || 22} ${url.hostname} >> ${file})`;
  }
  if (err.level === 'client-authentication')
    return `SSH login as ${decodeURIComponent(new URL(spec.docker).username)} was refused (${first}): check identity: or the agent's keys`;
  return first;
}

export interface Probe {
  ok: boolean;
  /** The engine's version when it answered. */
  version?: string;
  /** Why it did not, in one line. */
  error?: string;
  /** Whether the image nodes run in is there (when asked about one and the engine answered). */
  imagePresent?: boolean;
}

/** Pings the engine; an engine that does not answer within `waitMs` counts as unreachable. */
export async function probeEngine(spec: EngineSpec | string, waitMs = 10_000, image?: string): Promise<Probe> {
  const s = typeof spec === 'string' ? { docker: spec } : spec;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new EnvError(`no answer within ${waitMs / 1000} s`)), waitMs);
  });
  try {
    const docker = await engineAt(s);
    const v = await Promise.race([docker.version(), late]);
    if (image === undefined) return { ok: true, version: v.Version };
    const present = await Promise.race([
      docker
        .getImage(image)
        .inspect()
        .then(
          () => true,
          (err: { statusCode?: number }) => (err.statusCode === 404 ? false : Promise.reject(err)),
        ),
      late,
    ]);
    return { ok: true, version: v.Version, imagePresent: present };
  } catch (err) {
    return { ok: false, error: engineProblem(err as Error, s) };
  } finally {
    clearTimeout(timer);
  }
}

export interface GpuReport {
  /** GPUs nvidia-smi lists in a container on the host, with whether any process computes on them now. */
  gpus?: Array<{ index: string; name: string; memoryMiB: number; busy: boolean }>;
  /** Why none could be listed, in one line. */
  error?: string;
}

/**
 * Runs nvidia-smi in a container from `image` on the engine, asking for every
 * GPU the way nodes ask for theirs (a device request with the gpu
 * capability), so what it sees is what a node would get.
 */
export async function gpusOn(spec: EngineSpec, image: string, waitMs = 60_000): Promise<GpuReport> {
  const docker = await engineAt(spec);
  const query =
    'nvidia-smi --query-gpu=index,uuid,name,memory.total --format=csv,noheader,nounits && echo --- && nvidia-smi --query-compute-apps=gpu_uuid --format=csv,noheader';
  let c: Container | undefined;
  try {
    c = await createContainer(
      docker,
      {
        Image: image,
        Cmd: ['bash', '-c', query],
        // The toolkit puts nvidia-smi in the container only with the utility capability.
        Env: ['NVIDIA_DRIVER_CAPABILITIES=utility'],
        Labels: { 'mlepipe.probe': 'gpus' },
        HostConfig: { DeviceRequests: [{ Driver: '', Count: -1, Capabilities: [['gpu']], Options: {} }] },
      },
      { reap: false },
    );
    const started = await c.start().then(
      () => undefined,
      (err: Error) => err,
    );
    if (started) {
      const m = started.message.split('\n')[0];
      return {
        error: /device driver|nvidia|capabilit/i.test(m)
          ? `no GPUs: the engine has no NVIDIA runtime for GPU requests (${m.replace(/^\(HTTP code \d+\)[^-]*- /, '').trim()})`
          : m,
      };
    }
    const StatusCode = await c.wait({ timeoutMs: waitMs }).catch((err: Error) => {
      throw new EnvError(`nvidia-smi gave no answer: ${err.message}`);
    });
    const out = frames(await c.raw.logs({ stdout: true, stderr: true, follow: false }));
    if (StatusCode !== 0)
      return {
        error:
          StatusCode === 127
            ? `no GPUs: nvidia-smi is not in ${image} there, and the engine did not provide it`
            : `nvidia-smi failed (exit ${StatusCode}): ${out.trim().split('\n')[0] ?? ''}`,
      };
    const gpus = parseGpus(out);
    return gpus.length ? { gpus } : { error: 'no GPUs: nvidia-smi lists none' };
  } catch (err) {
    const e = err as Error & { statusCode?: number };
    return {
      error: e.statusCode === 404 ? `image ${image} is not there, so nvidia-smi could not run` : engineProblem(e, spec),
    };
  } finally {
    await c?.remove();
  }
}

/** GPUs from the two CSV queries (GPUs, then `---`, then the GPU ids of compute processes). */
export function parseGpus(out: string): NonNullable<GpuReport['gpus']> {
  const [list, apps = ''] = out.split('---');
  const busy = new Set(
    apps
      .split('\n')
      .map((l) => l.trim())
      .filter(Boolean),
  );
  return list
    .split('\n')
    .map((l) => l.split(',').map((f) => f.trim()))
    .filter((f) => f.length >= 4)
    .map(([index, uuid, name, mem]) => ({ index, name, memoryMiB: Number(mem), busy: busy.has(uuid) }));
}

/** The payload of a non-TTY container's log: frames of an 8-byte header (stream, 3 zero bytes, length) and that many bytes. */
function frames(buf: Buffer): string {
  const parts: Buffer[] = [];
  for (let at = 0; at + 8 <= buf.length;) {
    const len = buf.readUInt32BE(at + 4);
    parts.push(buf.subarray(at + 8, at + 8 + len));
    at += 8 + len;
  }
  return Buffer.concat(parts).toString('utf8');
}
