// Docker engines on other machines (`hosts:` in the settings): a client for
// an engine's address, and a probe saying whether it answers and what it runs.
import type Docker from 'dockerode';

/** A client for unix:///PATH, tcp://HOST:PORT or ssh://USER@HOST[:PORT] (key from the agent). */
export async function engineAt(address: string): Promise<Docker> {
  const { default: Dockerode } = await import('dockerode');
  const url = new URL(address);
  if (url.protocol === 'unix:') return new Dockerode({ socketPath: url.pathname });
  if (url.protocol === 'tcp:') return new Dockerode({ host: url.hostname, port: Number(url.port), protocol: 'http' });
  if (url.protocol === 'ssh:') {
    return new Dockerode({
      protocol: 'ssh',
      host: url.hostname,
      port: Number(url.port || 22),
      username: decodeURIComponent(url.username),
      sshOptions: { agent: process.env.SSH_AUTH_SOCK },
    } as Docker.DockerOptions);
  }
  throw new Error(`${address}: not a unix://, tcp:// or ssh:// address`);
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
export async function probeEngine(address: string, waitMs = 10_000, image?: string): Promise<Probe> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${waitMs / 1000} s`)), waitMs);
  });
  try {
    const docker = await engineAt(address);
    const v = await Promise.race([docker.version(), late]);
    if (image === undefined) return { ok: true, version: v.Version };
    const present = await Promise.race([docker.getImage(image).inspect().then(() => true, (err: { statusCode?: number }) => (err.statusCode === 404 ? false : Promise.reject(err))), late]);
    return { ok: true, version: v.Version, imagePresent: present };
  } catch (err) {
    return { ok: false, error: (err as Error).message.split('\n')[0] };
  } finally {
    clearTimeout(timer);
  }
}
