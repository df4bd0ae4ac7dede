// `mlepipe doctor`: what this machine has for mlepipe, and the fix for each missing piece.
import { execa } from 'execa';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cgroupSupport } from '../sandbox/cgroup.js';
import { createSandbox } from '../sandbox/index.js';
import { probeEngine } from '../sandbox/hosts.js';
import { choosePython, pythonEnv, type PythonChoice } from '../core/python.js';
import type { Settings } from './config/types.js';
import { envDetail, inspectEnvs, type EnvReport } from './pyenvs.js';

export interface Check {
  name: string;
  ok: boolean;
  required: boolean;
  detail: string;
  fix?: string;
}

const PY_MODULES = ['numpy', 'pandas', 'sklearn'];
const APT_PY =
  'apt-get install -y python3-numpy python3-pandas python3-sklearn python3-scipy python3-pil python3-networkx';

/** First interpreter (the chosen one, /usr/bin/python3, python3) that imports numpy, pandas and scikit-learn. */
export async function findPython(chosen?: string): Promise<{ path?: string; tried: string[] }> {
  const candidates = [...new Set([chosen, '/usr/bin/python3', 'python3'].filter((c): c is string => !!c))];
  const tried: string[] = [];
  for (const c of candidates) {
    const r = await execa(c, ['-c', `import ${PY_MODULES.join(', ')}, sys; print(sys.executable)`], {
      reject: false,
      timeout: 30_000,
    });
    if (r.exitCode === 0) return { path: String(r.stdout).trim() || c, tried };
    tried.push(
      `${c}: ${r.failed && (r as { code?: string }).code === 'ENOENT' ? 'not found' : lastLine(String(r.stderr)) || `exit ${r.exitCode}`}`,
    );
  }
  return { tried };
}

const SOURCES: Record<PythonChoice['source'], string> = {
  settings: 'python: in settings',
  agent: 'the agent environment',
  system: 'fallback: the agent environment is not installed',
};

/** The interpreter stages use, and whether it imports numpy, pandas and scikit-learn. */
async function pythonCheck(settings: Settings, choice: PythonChoice, agent: EnvReport): Promise<Check> {
  const py = await findPython(choice.path);
  // Stages use the chosen interpreter as it is, so a broken one fails even if another works.
  const broken = py.tried.find((t) => t.startsWith(`${choice.path}:`));
  const prefix = choice.source === 'settings' ? 'configured ' : '';
  return {
    name: 'python',
    ok: !!py.path && !broken,
    required: true,
    detail: broken
      ? `${prefix}${broken}${py.path ? `; ${py.path} would work` : ''}`
      : py.path
        ? `${py.path} (${SOURCES[choice.source]}; ${PY_MODULES.join(', ')})`
        : `none imports ${PY_MODULES.join(', ')}: ${py.tried.join('; ')}`,
    fix:
      choice.source === 'settings'
        ? `fix or remove python: in ${settings.file}`
        : choice.source === 'agent'
          ? (agent.fix ?? pythonEnv('agent').fix)
          : `${pythonEnv('agent').fix} (or, on Debian, ${APT_PY}; or set python: in mlepipe.config.yaml)`,
  };
}

/** What MLE-bench's graders import beyond the numeric stack (its utils module needs py7zr, yaml and tqdm). */
export const GRADING_MODULES = ['py7zr', 'yaml', 'tqdm', 'pandas', 'sklearn'];

/** Whether the interpreter stages grade with can load MLE-bench's graders (the mlebench stage). */
async function gradingCheck(choice: PythonChoice): Promise<Check> {
  const r = await execa(choice.path, ['-c', `import ${GRADING_MODULES.join(', ')}`], {
    reject: false,
    timeout: 60_000,
  });
  return {
    name: 'mlebench grading',
    ok: r.exitCode === 0,
    required: false,
    detail:
      r.exitCode === 0
        ? `${choice.path} imports ${GRADING_MODULES.join(', ')} (what MLE-bench's graders need)`
        : `${choice.path}: ${lastLine(String(r.stderr)) || `exit ${r.exitCode}`}`,
    fix: pythonEnv('agent').fix,
  };
}

function envCheck(r: EnvReport, choice: PythonChoice): Check {
  const inUse = r.name === 'agent' && choice.source === 'agent' ? '; stages use it' : '';
  return { name: `env ${r.name}`, ok: !r.fix, required: false, detail: envDetail(r) + inUse, fix: r.fix };
}

export interface Report {
  python: PythonChoice;
  environments: EnvReport[];
  checks: Check[];
}

export async function runChecks(settings: Settings, env: NodeJS.ProcessEnv = process.env): Promise<Report> {
  const checks: Check[] = [];
  const major = Number(process.versions.node.split('.')[0]);
  checks.push({
    name: 'node',
    ok: major >= 20,
    required: true,
    detail: `v${process.versions.node}`,
    fix: 'install Node.js 20 or newer',
  });

  const choice = choosePython(settings.python);
  const environments = await inspectEnvs();
  checks.push(
    await pythonCheck(
      settings,
      choice,
      environments.find((e) => e.name === 'agent')!,
    ),
  );
  checks.push(await gradingCheck(choice));
  for (const r of environments) checks.push(envCheck(r, choice));

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

  const hosts = Object.entries(settings.hosts);
  if (!hosts.length)
    checks.push({
      name: 'gpu hosts',
      ok: true,
      required: false,
      detail: 'none configured (optional: hosts: in mlepipe.config.yaml)',
    });
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
  return { python: choice, environments, checks };
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

function lastLine(s: string): string {
  return s.trim().split('\n').pop() ?? '';
}
