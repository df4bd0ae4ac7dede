// A shell node on a host: the command runs in a container on that host's
// Docker engine. Its dependencies and input folders go up as one tar
// archive, its output folder and declared outputs come back as archives
// into the staging folder (which the engine then publishes as for a local
// node), and its output streams into the node's log. A host that mounts this
// machine's cache (cache_dir) gets the input entries and the staging folder
// as bind mounts instead. Whatever happens, the container goes.
import { randomBytes } from 'node:crypto';
import { cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, isAbsolute, join, normalize, posix, relative, resolve, sep } from 'node:path';
import type { Readable } from 'node:stream';
import { HostFault } from '../../core/errors.js';
import { onceAborted, waitAtMost } from '../../core/proc.js';
import { createContainer, DEFAULT_IMAGE, envList, fetchInto, type Container } from '../../sandbox/containers.js';
import { engineAt, engineProblem } from '../../sandbox/hosts.js';
import type { HostPlacement, StageContext, StageResult } from '../contract.js';
import { deviceRequests } from '../shared/devices.js';
import { inputEnvName, placeProblem, type ShellParams } from './index.js';
import { finish, modelEnv } from './run.js';

const ROOT = '/mlepipe';
const tarFs = async () => (await import('tar-fs')).default;

export async function runOnHost(ctx: StageContext<ShellParams>, host: HostPlacement): Promise<StageResult> {
  const p = ctx.params;
  const at = `host ${host.name}`;
  const image = host.image ?? DEFAULT_IMAGE;
  const docker = await engineAt(host).catch((err: Error) => {
    throw new Error(`${at}: ${oneLine(err)}`);
  });
  await docker.ping().catch((err: Error) => {
    throw new HostFault(host.name, `${at} (${host.docker}) is unreachable: ${engineProblem(err, host)}`);
  });

  const env: Record<string, string> = {
    ...host.env,
    MLEPIPE_NODE: ctx.node.id,
    MLEPIPE_OUT: `${ROOT}/out`,
    MLEPIPE_ITEMS: `${ROOT}/items`,
    MLEPIPE_PARAMS: JSON.stringify(p.params),
    // The image's own interpreter: the host's paths mean nothing there.
    MLEPIPE_PYTHON: 'python3',
    MLEPIPE_HOST: host.name,
  };
  const inputDir = (i: number) => `${ROOT}/in/${i}`;
  env.MLEPIPE_INPUTS = JSON.stringify(Object.fromEntries(ctx.inputs.map((inp, i) => [inp.name, inputDir(i)])));
  ctx.inputs.forEach((inp, i) => (env[inputEnvName(inp.name)] = inputDir(i)));
  if (p.model) Object.assign(env, modelEnv(ctx.models[p.model], process.env));
  for (const [k, v] of Object.entries(p.env)) env[k] = String(v);

  const upload = await mkdtemp(join(tmpdir(), 'mlepipe-host-'));
  let c: Container | undefined;
  try {
    const root = join(upload, ROOT.slice(1));
    // With a shared cache the input and output folders are mounts: only the dependencies travel.
    const shared = host.cacheDir === undefined ? undefined : sharedMounts(ctx, host.cacheDir);
    for (const d of shared ? ['exp', 'items'] : ['exp', 'out', 'items', 'in'])
      await mkdir(join(root, d), { recursive: true });
    for (const dep of p.deps) await cp(resolve(ctx.experimentDir, dep), join(root, 'exp', dep), { recursive: true });
    if (!shared)
      for (const [i, inp] of ctx.inputs.entries()) await cp(inp.dir, join(root, 'in', String(i)), { recursive: true });

    c = await createContainer(
      docker,
      {
        Image: image,
        Cmd: ['bash', '-c', p.run],
        WorkingDir: `${ROOT}/exp`,
        Env: envList(env),
        Labels: { 'mlepipe.node': ctx.node.id },
        HostConfig: {
          Init: true,
          ...(host.shmSize !== undefined && { ShmSize: host.shmSize }),
          ...(shared && { Binds: shared }),
          ...deviceRequests(host),
        },
      },
      // The watchdog reaches only this machine's engine; other engines' containers go in the finally below.
      { reap: host.docker.startsWith('unix://') },
    ).catch((err: { statusCode?: number } & Error) => {
      if (err.statusCode === 404)
        throw new HostFault(
          host.name,
          `${at}: image ${image} not found there (build or pull it on ${host.name}, or set hosts.${host.name}.image)`,
        );
      throw new HostFault(host.name, `${at}: could not create the node's container: ${oneLine(err)}`);
    });
    if (shared) await checkShared(c, ctx.outDir, host);
    const tar = await tarFs();
    await c.raw
      .putArchive(tar.pack(upload, { dereference: true }) as unknown as NodeJS.ReadableStream, { path: '/' })
      .catch(lostWhile(host, 'sending the inputs'));

    const io = await c.attach({ merged: true }).catch(lostWhile(host, "attaching to the node's output"));
    const logged = logLines(io.stdout, ctx.log);
    let timedOut = false;
    const kill = () => c!.kill();
    const timer = p.timeout_s
      ? setTimeout(() => {
          timedOut = true;
          kill();
        }, p.timeout_s * 1000)
      : undefined;
    const stopAbort = onceAborted(ctx.signal, kill);
    let status: number;
    try {
      await c.start().catch((err: Error) => {
        throw new HostFault(host.name, `${at}: could not start the node's container: ${oneLine(err)}`);
      });
      status = await c.wait().catch((err: Error) => {
        throw new HostFault(host.name, `${at}: lost the node's container: ${oneLine(err)}`);
      });
    } finally {
      clearTimeout(timer);
      stopAbort();
    }
    // The output stream of a lost connection may never end either.
    await waitAtMost(io.ended, 5000);
    io.close();
    await logged;

    if (ctx.signal.aborted) throw new Error('interrupted');
    if (timedOut) throw new Error(`command timed out after ${p.timeout_s}s on ${at}`);
    if (status !== 0) {
      const state = (await c.raw.inspect().catch(() => undefined))?.State;
      if (state?.OOMKilled) throw new Error(`${at}: the container ran out of memory`);
      // 137 without our kill: someone (or something) on the host killed the container.
      if (status === 137) throw new HostFault(host.name, `${at}: the node's container was killed (exit 137)`);
      throw new Error(`command exited with code ${status} on ${at}`);
    }

    if (!shared)
      await fetchInto(c, `${ROOT}/out/.`, ctx.outDir).catch(lostWhile(host, "fetching the node's output folder"));
    for (const out of p.outs) {
      const problem = placeProblem('outs', out);
      if (problem) throw new Error(`outs: ${problem}`);
      const rel = normalize(out).replace(/\/+$/, '');
      const parent = join(ctx.outDir, dirname(rel));
      await mkdir(parent, { recursive: true });
      const found = await fetchInto(c, `${ROOT}/exp/${rel}`, parent).catch((err: { statusCode?: number } & Error) => {
        if (err.statusCode === 404) return false;
        throw new Error(`${at}: could not fetch ${out}: ${oneLine(err)}`);
      });
      if (found === false) throw new Error(`declared output ${out} was not written`);
    }
    return await finish(ctx);
  } finally {
    await c?.remove();
    await rm(upload, { recursive: true, force: true });
  }
}

/**
 * Binds for a host that mounts this machine's cache at `cacheDir`: each input
 * entry read-only, the node's staging folder as its output folder.
 */
function sharedMounts(ctx: StageContext<ShellParams>, cacheDir: string): string[] {
  const there = (local: string) => {
    const rel = relative(ctx.cacheRoot, local);
    if (rel.startsWith('..') || isAbsolute(rel))
      throw new Error(`${local} is not in the cache ${ctx.cacheRoot}, which cache_dir mirrors`);
    return posix.join(cacheDir, ...rel.split(sep));
  };
  return [...ctx.inputs.map((inp, i) => `${there(inp.dir)}:${ROOT}/in/${i}:ro`), `${there(ctx.outDir)}:${ROOT}/out`];
}

/**
 * A cache_dir that is not this machine's cache would hand the node empty
 * folders (the engine makes missing bind sources): a marker written into the
 * staging folder here must be seen in the created container before it starts.
 */
async function checkShared(c: Container, outDir: string, host: HostPlacement): Promise<void> {
  const token = randomBytes(12).toString('hex');
  const marker = join(outDir, '.mlepipe-shared');
  await writeFile(marker, token);
  try {
    const seen = await c.raw.getArchive({ path: `${ROOT}/out/.mlepipe-shared` }).then(
      async (archive) => {
        const chunks: Buffer[] = [];
        for await (const chunk of archive as unknown as Readable) chunks.push(chunk as Buffer);
        return Buffer.concat(chunks).includes(token);
      },
      () => false,
    );
    if (!seen)
      throw new HostFault(
        host.name,
        `host ${host.name}: cache_dir ${host.cacheDir} there does not hold this machine's cache (a file written to ${outDir} did not appear in the node's output folder)`,
      );
  } finally {
    await rm(marker, { force: true });
  }
}

async function logLines(stream: Readable, log: (line: string) => void): Promise<void> {
  let rest = '';
  for await (const chunk of stream) {
    const parts = (rest + String(chunk)).split('\n');
    rest = parts.pop()!;
    for (const line of parts) log(line);
  }
  if (rest) log(rest);
}

const oneLine = (err: Error) => err.message.split('\n')[0];

/** Any other request the engine drops mid-way fails the node naming the host and the step. */
const lostWhile =
  (host: HostPlacement, what: string) =>
  (err: Error): never => {
    throw new HostFault(host.name, `host ${host.name}: lost the engine while ${what}: ${oneLine(err)}`);
  };
