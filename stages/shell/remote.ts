// A shell node on a host: the command runs in a container on that host's
// Docker engine. Its dependencies and input folders go up as one tar
// archive, its output folder and declared outputs come back as archives
// into the staging folder (which the engine then publishes as for a local
// node), and its output streams into the node's log. A host that mounts this
// machine's cache (cache_dir) gets the input entries and the staging folder
// as bind mounts instead. Whatever happens, the container goes.
import { cp, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, normalize, resolve } from 'node:path';
import type { Readable } from 'node:stream';
import type Docker from 'dockerode';
import { EnvError, HostFault, InternalError, StageFailure } from '../../core/errors.js';
import { onceAborted, waitAtMost } from '../../core/proc.js';
import { createContainer, DEFAULT_IMAGE, envList, fetchInto, type Container } from '../../sandbox/containers.js';
import { engineAt, engineProblem } from '../../sandbox/hosts.js';
import type { HostPlacement, StageContext, StageResult } from '../contract.js';
import { deviceRequests } from '../shared/devices.js';
import { inputEnvName, placeProblem, type ShellParams } from './index.js';
import { finish } from './metrics.js';
import { modelEnv } from './run.js';
import { checkShared, ROOT, sharedMounts } from './shared-cache.js';

const tarFs = async () => (await import('tar-fs')).default;

export async function runOnHost(ctx: StageContext<ShellParams>, host: HostPlacement): Promise<StageResult> {
  const docker = await reachEngine(host);
  const upload = await mkdtemp(join(tmpdir(), 'mlepipe-host-'));
  let c: Container | undefined;
  try {
    // With a shared cache the input and output folders are mounts: only the dependencies travel.
    const shared = host.cacheDir === undefined ? undefined : sharedMounts(ctx, host.cacheDir);
    await stageUpload(ctx, join(upload, ROOT.slice(1)), shared !== undefined);
    c = await nodeContainer(ctx, docker, host, shared);
    if (shared) await checkShared(c, ctx.outDir, host);
    const tar = await tarFs();
    await c.raw
      .putArchive(tar.pack(upload, { dereference: true }) as unknown as NodeJS.ReadableStream, { path: '/' })
      .catch(lostWhile(host, 'sending the inputs'));
    const ran = await runContainer(ctx, c, host);
    await checkExit(ctx, c, host, ran);
    await fetchOutputs(ctx, c, host, shared !== undefined);
    return await finish(ctx);
  } finally {
    await c?.remove();
    await rm(upload, { recursive: true, force: true });
  }
}

/** The host's engine, answering. */
async function reachEngine(host: HostPlacement): Promise<Docker> {
  const at = `host ${host.name}`;
  const docker = await engineAt(host).catch((err: Error) => {
    throw new EnvError(`${at}: ${oneLine(err)}`);
  });
  await docker.ping().catch((err: Error) => {
    throw new HostFault(host.name, `${at} (${host.docker}) is unreachable: ${engineProblem(err, host)}`);
  });
  return docker;
}

/** The command's environment in the container: the node's folders as they are there, its model and env:. */
function hostEnv(ctx: StageContext<ShellParams>, host: HostPlacement): Record<string, string> {
  const p = ctx.params;
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
  return env;
}

/** Lays out what goes up as one archive: the dependencies, and the input folders unless they are mounted. */
async function stageUpload(ctx: StageContext<ShellParams>, root: string, shared: boolean): Promise<void> {
  for (const d of shared ? ['exp', 'items'] : ['exp', 'out', 'items', 'in'])
    await mkdir(join(root, d), { recursive: true });
  for (const dep of ctx.params.deps)
    await cp(resolve(ctx.experimentDir, dep), join(root, 'exp', dep), { recursive: true });
  if (!shared)
    for (const [i, inp] of ctx.inputs.entries()) await cp(inp.dir, join(root, 'in', String(i)), { recursive: true });
}

/** The node's container, created (not started) on the host's engine. */
async function nodeContainer(
  ctx: StageContext<ShellParams>,
  docker: Docker,
  host: HostPlacement,
  shared: string[] | undefined,
): Promise<Container> {
  const at = `host ${host.name}`;
  const image = host.image ?? DEFAULT_IMAGE;
  return createContainer(
    docker,
    {
      Image: image,
      Cmd: ['bash', '-c', ctx.params.run],
      WorkingDir: `${ROOT}/exp`,
      Env: envList(hostEnv(ctx, host)),
      Labels: { 'mlepipe.node': ctx.node.id },
      HostConfig: {
        Init: true,
        ...(host.shmSize !== undefined && { ShmSize: host.shmSize }),
        ...(shared && { Binds: shared }),
        ...deviceRequests(host),
      },
    },
    // The watchdog reaches only this machine's engine; other engines' containers go in runOnHost's finally.
    { reap: host.docker.startsWith('unix://') },
  ).catch((err: { statusCode?: number } & Error) => {
    if (err.statusCode === 404)
      throw new HostFault(
        host.name,
        `${at}: image ${image} not found there (build or pull it on ${host.name}, or set hosts.${host.name}.image)`,
      );
    throw new HostFault(host.name, `${at}: could not create the node's container: ${oneLine(err)}`);
  });
}

/** Starts the container and waits for it, its output in the node's log; stopped by the timeout or the signal. */
async function runContainer(ctx: StageContext<ShellParams>, c: Container, host: HostPlacement) {
  const p = ctx.params;
  const at = `host ${host.name}`;
  const io = await c.attach({ merged: true }).catch(lostWhile(host, "attaching to the node's output"));
  const logged = logLines(io.stdout, ctx.log);
  let timedOut = false;
  const kill = () => c.kill();
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
  return { status, timedOut };
}

/** How the command ended, as the node's failure when it did not exit cleanly. */
async function checkExit(
  ctx: StageContext<ShellParams>,
  c: Container,
  host: HostPlacement,
  ran: { status: number; timedOut: boolean },
): Promise<void> {
  const at = `host ${host.name}`;
  ctx.signal.throwIfAborted();
  if (ran.timedOut) throw new StageFailure(`command timed out after ${ctx.params.timeout_s}s on ${at}`);
  if (ran.status === 0) return;
  const state = (await c.raw.inspect().catch(() => undefined))?.State;
  if (state?.OOMKilled) throw new StageFailure(`${at}: the container ran out of memory`);
  // 137 without our kill: someone (or something) on the host killed the container.
  if (ran.status === 137) throw new HostFault(host.name, `${at}: the node's container was killed (exit 137)`);
  throw new StageFailure(`command exited with code ${ran.status} on ${at}`);
}

/** The output folder (unless it is mounted) and each declared output, back into the staging folder. */
async function fetchOutputs(ctx: StageContext<ShellParams>, c: Container, host: HostPlacement, shared: boolean) {
  const at = `host ${host.name}`;
  if (!shared)
    await fetchInto(c, `${ROOT}/out/.`, ctx.outDir).catch(lostWhile(host, "fetching the node's output folder"));
  for (const out of ctx.params.outs) {
    // Refused at validation already: here it would be mlepipe's own mistake.
    const problem = placeProblem('outs', out);
    if (problem) throw new InternalError(`outs: ${problem}`);
    const rel = normalize(out).replace(/\/+$/, '');
    const parent = join(ctx.outDir, dirname(rel));
    await mkdir(parent, { recursive: true });
    const found = await fetchInto(c, `${ROOT}/exp/${rel}`, parent).catch((err: { statusCode?: number } & Error) => {
      if (err.statusCode === 404) return false;
      throw new StageFailure(`${at}: could not fetch ${out}: ${oneLine(err)}`);
    });
    if (found === false) throw new StageFailure(`declared output ${out} was not written`);
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
