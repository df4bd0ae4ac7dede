// The doctor's Python checks: the interpreter stages use, what MLE-bench's graders import, and the
// environments mlepipe installs (agent, trainer).
import { execa } from 'execa';
import { pythonEnv, type PythonChoice } from '../../core/python.js';
import type { Settings } from '../config/types.js';
import { envDetail, type EnvReport } from '../pyenvs.js';
import type { Check } from './check.js';

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
export async function pythonCheck(settings: Settings, choice: PythonChoice, agent: EnvReport): Promise<Check> {
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
export async function gradingCheck(choice: PythonChoice): Promise<Check> {
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

export function envCheck(r: EnvReport, choice: PythonChoice): Check {
  const inUse = r.name === 'agent' && choice.source === 'agent' ? '; stages use it' : '';
  return { name: `env ${r.name}`, ok: !r.fix, required: false, detail: envDetail(r) + inUse, fix: r.fix };
}

function lastLine(s: string): string {
  return s.trim().split('\n').pop() ?? '';
}
