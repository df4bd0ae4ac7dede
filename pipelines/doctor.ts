// `mlepipe doctor`: what this machine has for mlepipe, and the fix for each missing piece.
import { execa } from 'execa';
import type { Settings } from './config/types.js';

export interface Check {
  name: string;
  ok: boolean;
  required: boolean;
  detail: string;
  fix?: string;
}

const PY_MODULES = ['numpy', 'pandas', 'sklearn'];
const APT_PY = 'apt-get install -y python3-numpy python3-pandas python3-sklearn python3-scipy python3-pil python3-networkx';

/** First interpreter (configured, /usr/bin/python3, python3) that imports numpy, pandas and scikit-learn. */
export async function findPython(configured?: string): Promise<{ path?: string; tried: string[] }> {
  const candidates = [...new Set([configured, '/usr/bin/python3', 'python3'].filter((c): c is string => !!c))];
  const tried: string[] = [];
  for (const c of candidates) {
    const r = await execa(c, ['-c', `import ${PY_MODULES.join(', ')}, sys; print(sys.executable)`], { reject: false, timeout: 30_000 });
    if (r.exitCode === 0) return { path: String(r.stdout).trim() || c, tried };
    tried.push(`${c}: ${r.failed && (r as { code?: string }).code === 'ENOENT' ? 'not found' : lastLine(String(r.stderr)) || `exit ${r.exitCode}`}`);
  }
  return { tried };
}

export async function runChecks(settings: Settings, env: NodeJS.ProcessEnv = process.env): Promise<Check[]> {
  const checks: Check[] = [];
  const major = Number(process.versions.node.split('.')[0]);
  checks.push({ name: 'node', ok: major >= 20, required: true, detail: `v${process.versions.node}`, fix: 'install Node.js 20 or newer' });

  const py = await findPython(settings.python);
  // Stages use the configured interpreter as given, so a broken one fails even if another works.
  const configuredBroken = !!settings.python && py.tried.some((t) => t.startsWith(`${settings.python}:`));
  checks.push({
    name: 'python',
    ok: !!py.path && !configuredBroken,
    required: true,
    detail: configuredBroken
      ? `configured ${py.tried[0]}${py.path ? `; ${py.path} would work` : ''}`
      : py.path
        ? `${py.path} (numpy, pandas, sklearn)`
        : `none imports ${PY_MODULES.join(', ')}: ${py.tried.join('; ')}`,
    fix: configuredBroken
      ? `fix or remove python: in ${settings.file}`
      : `${APT_PY} (Debian; they install under /usr/bin/python3), or set python: in mlepipe.config.yaml`,
  });

  const backend = settings.sandbox.backend;
  const bw = await execa('bwrap', ['--ro-bind', '/', '/', '--unshare-all', '--die-with-parent', 'true'], { reject: false, timeout: 15_000 });
  checks.push({
    name: 'bubblewrap',
    ok: bw.exitCode === 0,
    required: backend === 'bwrap',
    detail: bw.exitCode === 0 ? 'creates namespaces' : lastLine(String(bw.stderr)) || 'not found',
    fix: 'apt-get install -y bubblewrap (and allow unprivileged user namespaces)',
  });

  checks.push(await dockerCheck(backend === 'docker', env));

  const hosts = Object.entries(settings.hosts);
  if (!hosts.length) checks.push({ name: 'gpu hosts', ok: true, required: false, detail: 'none configured (optional: hosts: in mlepipe.config.yaml)' });
  for (const [name, h] of hosts) {
    const r = await execa('ssh', ['-o', 'BatchMode=yes', '-o', 'ConnectTimeout=5', h.ssh, 'nvidia-smi -L'], { reject: false, timeout: 20_000 });
    checks.push({
      name: `host ${name}`,
      ok: r.exitCode === 0,
      required: false,
      detail: r.exitCode === 0 ? `${String(r.stdout).split('\n').filter(Boolean).length} GPU(s) via ${h.ssh}` : `${h.ssh}: ${lastLine(String(r.stderr)) || 'unreachable'}`,
      fix: `check that \`ssh ${h.ssh} nvidia-smi\` works without a password prompt`,
    });
  }
  return checks;
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
      fix: 'apt-get install -y docker.io && dockerd --storage-driver=vfs --iptables=false --bridge=none &  (or set DOCKER_HOST)',
    };
  }
}

function lastLine(s: string): string {
  return s.trim().split('\n').pop() ?? '';
}
