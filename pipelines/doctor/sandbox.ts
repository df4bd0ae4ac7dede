// The doctor's checks of where steps run: a real step in each sandbox backend, the Docker engine, control
// groups for the step's caps, and the GPU hosts of the settings.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PythonChoice } from '../../core/python.js';
import { cgroupSupport } from '../../sandbox/cgroup.js';
import { probeEngine } from '../../sandbox/hosts.js';
import { createSandbox } from '../../sandbox/index.js';
import type { Settings } from '../config/types.js';
import type { Check } from './check.js';

/** The bwrap backend, the Docker engine and (when it answers) the docker backend, then control groups. */
export async function sandboxChecks(
  settings: Settings,
  choice: PythonChoice,
  env: NodeJS.ProcessEnv,
): Promise<Check[]> {
  const checks: Check[] = [];
  const backend = settings.sandbox.backend;
  checks.push(
    await backendCheck(
      'bwrap',
      backend === 'bwrap',
      settings,
      choice,
      'apt-get install -y bubblewrap (and allow user namespaces)',
    ),
  );
  const engine = await dockerCheck(backend === 'docker', env);
  checks.push(engine);
  if (engine.ok) {
    checks.push(
      await backendCheck(
        'docker',
        backend === 'docker',
        settings,
        choice,
        `bash sandbox/image/build.sh${settings.sandbox.image ? ` ${settings.sandbox.image}` : ''} (or docker build -t mlepipe-sandbox sandbox/image)`,
      ),
    );
  }
  const cg = await cgroupSupport();
  checks.push({
    name: 'cgroups',
    ok: cg !== 'none',
    required: false,
    detail:
      cg === 'none'
        ? 'not writable: process and memory caps fall back to per-process rlimits'
        : `${cg}: process and memory caps count every process of a step`,
    fix: 'run as root, or delegate a cgroup subtree to this user',
  });
  return checks;
}

/** Each GPU host of the settings: whether its Docker engine answers from here. */
export async function hostChecks(settings: Settings): Promise<Check[]> {
  const hosts = Object.entries(settings.hosts);
  if (!hosts.length)
    return [
      {
        name: 'gpu hosts',
        ok: true,
        required: false,
        detail: 'none configured (optional: hosts: in mlepipe.config.yaml)',
      },
    ];
  const checks: Check[] = [];
  for (const [name, h] of hosts) {
    const r = await probeEngine(h);
    checks.push({
      name: `host ${name}`,
      ok: r.ok,
      required: false,
      detail: r.ok ? `Docker ${r.version} at ${h.docker}` : `${h.docker}: ${r.error ?? 'unreachable'}`,
      fix: `check that \`docker -H ${h.docker} version\` answers from this machine`,
    });
  }
  return checks;
}

/** Runs a real step (numpy, pandas, sklearn imported) in a fresh jail of that backend, with the interpreter stages use. */
async function backendCheck(
  name: 'bwrap' | 'docker',
  required: boolean,
  settings: Settings,
  choice: PythonChoice,
  fix: string,
): Promise<Check> {
  const task = await mkdtemp(join(tmpdir(), 'mlepipe-doctor-'));
  try {
    await mkdir(join(task, 'public'));
    const sandbox = createSandbox({
      backend: name,
      image: settings.sandbox.image,
      python: choice.path,
      warn: () => {},
    });
    const session = await sandbox.open({ task, limits: { timeoutMs: 60_000 } });
    try {
      await writeFile(
        join(session.workspace, 'check.py'),
        'import sys, numpy, pandas, sklearn\nprint("ok", sys.executable)\n',
      );
      const r = await session.run({ file: 'check.py' });
      const [said, inJail] = r.stdout.trim().split(' ');
      const ok = r.exitCode === 0 && said === 'ok';
      return {
        name: `sandbox ${name}`,
        ok,
        required,
        detail: ok
          ? `a step runs ${inJail} and imports numpy, pandas, sklearn in ${r.durationMs} ms`
          : `step failed: ${r.stderr.trim().split('\n').pop() ?? `exit ${r.exitCode}`}`,
        fix,
      };
    } finally {
      await session.close();
    }
  } catch (err) {
    return { name: `sandbox ${name}`, ok: false, required, detail: (err as Error).message.split('\n')[0], fix };
  } finally {
    await rm(task, { recursive: true, force: true });
  }
}

async function dockerCheck(required: boolean, env: NodeJS.ProcessEnv): Promise<Check> {
  const where = env.DOCKER_HOST ?? 'local socket';
  try {
    const { default: Docker } = await import('dockerode');
    const docker = new Docker();
    const v = await Promise.race([
      docker.version(),
      new Promise<never>((_, rej) => setTimeout(() => rej(new Error('no answer in 5 s')), 5000).unref()),
    ]);
    return { name: 'docker', ok: true, required, detail: `engine ${v.Version} (${where})` };
  } catch (err) {
    return {
      name: 'docker',
      ok: false,
      required,
      detail: `no engine at ${where}: ${(err as Error).message.split('\n')[0]}`,
      fix: 'apt-get install -y docker.io && dockerd --iptables=false --bridge=none &  (or set DOCKER_HOST)',
    };
  }
}
