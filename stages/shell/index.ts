// `uses: shell`: a bash command as a node. Dependency files are hashed into
// the key, declared outputs are captured into the cache entry, and upstream
// nodes' folders arrive as environment variables (DVC-style stages).
import { readFile, stat } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { normalize, resolve } from 'node:path';
import { ParamError } from '../../core/errors.js';
import { canonicalJson, hashFile, sha256 } from '../../core/hash.js';
import { listFiles } from '../../core/fs.js';
import { pathProblem } from '../../core/inside.js';
import { modelIdentity } from '../../core/models.js';
import { rewardFormula } from '../../core/rewards/presets.js';
import schema from '../../schemas/stages/shell.schema.json';
import type { Artifact, ParamIssue, Stage } from '../contract.js';
import { lazyRun } from '../lazy.js';

export interface ShellParams {
  run: string;
  deps: string[];
  outs: string[];
  env: Record<string, string | number | boolean>;
  params: Record<string, unknown>;
  timeout_s?: number;
  model?: string;
  reward?: string;
}

/** `MLEPIPE_IN_<NAME>` for an input named `name`. */
export function inputEnvName(name: string): string {
  return `MLEPIPE_IN_${name.toUpperCase().replace(/[^A-Z0-9]/g, '_')}`;
}

// Outputs under these names give what other stages read (a shell can make tasks).
const CONVENTIONAL: Readonly<Record<string, Artifact>> = {
  tasks: 'tasks',
  'split.json': 'split',
  'trajectories.jsonl': 'trajectories',
  'checkpoint.json': 'policy',
};

/** Why a `deps`/`outs` entry does not name a place inside the experiment's folder, or undefined. */
export function placeProblem(field: 'deps' | 'outs', path: string): string | undefined {
  const problem = pathProblem(path);
  if (problem === 'absolute')
    return `${path} is an absolute path (${field} are relative paths inside the experiment folder)`;
  if (problem === 'outside') return `${path} leaves the experiment folder (${field} are relative paths inside it)`;
  // A whole-folder dependency is fine; copying the folder into its own output is not.
  if (problem === 'itself' && field === 'outs')
    return `${path} names the experiment folder itself (outs are relative paths inside it)`;
  return undefined;
}

const PYTHON_VAR = 'MLEPIPE_PYTHON';
// Dependencies up to this size are read for PYTHON_VAR (scripts); larger ones are data.
const SCRIPT_MAX_BYTES = 1 << 20;

const missingDep = (dep: string, full: string) => `dependency ${dep} does not exist (looked for ${full})`;

export const shell: Stage<ShellParams> = {
  kind: 'shell',
  version: 1,
  description: 'Run a bash command; deps are hashed into the key, outs are captured.',
  schema,
  flow: { gives: (p) => ['files', ...p.outs.flatMap((o) => CONVENTIONAL[normalize(o).replace(/\/+$/, '')] ?? [])] },

  check(p, ctx) {
    const issues: ParamIssue[] = [];
    p.deps.forEach((dep, i) => {
      const problem = placeProblem('deps', dep);
      const full = resolve(ctx.experimentDir, dep);
      if (problem) issues.push({ param: ['deps', i], message: problem });
      else if (!existsSync(full)) issues.push({ param: ['deps', i], message: missingDep(dep, full) });
    });
    p.outs.forEach((out, i) => {
      const problem = placeProblem('outs', out);
      if (problem) issues.push({ param: ['outs', i], message: problem });
    });
    return issues;
  },

  // Checked when the file loads too; a dependency may have gone between planning and running.
  preflight: (p) => p.deps.map((dep, i) => ({ what: 'dependency', path: dep, param: ['deps', i] })),

  async keyExtras(params, ctx) {
    const deps: Record<string, string> = {};
    let namesPython = [params.run, ...Object.values(params.env).map(String)].some((s) => s.includes(PYTHON_VAR));
    for (const [i, dep] of params.deps.entries()) {
      const full = resolve(ctx.experimentDir, dep);
      const st = await stat(full).catch(() => null);
      // Checked at validation; the file may have gone since.
      if (!st) throw new ParamError(['deps', i], missingDep(dep, full));
      deps[dep] = st.isDirectory() ? sha256(canonicalJson(await listFiles(full))) : await hashFile(full);
      if (!namesPython && st.isFile() && st.size <= SCRIPT_MAX_BYTES)
        namesPython = (await readFile(full, 'utf8')).includes(PYTHON_VAR);
    }
    const model = params.model ? modelIdentity(ctx.models[params.model]) : null;
    const reward = params.reward ? rewardFormula(params.reward, ctx.rewards) : null;
    // A command reaches the project's interpreter only through $MLEPIPE_PYTHON:
    // one that names it (in run:, env: or a script among its deps) is keyed on
    // the Python environment as well; one that does not (its own tools, other
    // interpreters) keeps its key when the environment changes.
    return { deps, model, reward, ...(namesPython ? { python: await ctx.python() } : {}) };
  },

  run: lazyRun(() => import('./run.js')),
};
