// `uses: shell`: a bash command as a node. Dependency files are hashed into
// the key, declared outputs are captured into the cache entry, and upstream
// nodes' folders arrive as environment variables (DVC-style stages).
import { execa } from 'execa';
import { cp, readFile, stat } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join, normalize, resolve } from 'node:path';
import { ParamError } from '../../core/errors.js';
import { canonicalJson, hashFile, sha256 } from '../../core/hash.js';
import { exists, listFiles } from '../../core/fs.js';
import { OutsideError, pathProblem, resolveInside } from '../../core/inside.js';
import { modelIdentity, type ModelSpec } from '../../core/models.js';
import { evaluate, parseFormula, REWARD_VARIABLES } from '../../core/rewards/parse.js';
import { rewardFormula } from '../../core/rewards/presets.js';
import schema from '../../schemas/stages/shell.schema.json';
import type { Artifact, Metrics, ParamIssue, Stage } from '../contract.js';
import { killGroupNow, killTree, onceAborted } from '../../core/proc.js';
import { gated, reapGroup } from '../../core/reaper.js';

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
const CONVENTIONAL: Readonly<Record<string, Artifact>> = { tasks: 'tasks', 'split.json': 'split', 'trajectories.jsonl': 'trajectories', 'checkpoint.json': 'policy' };

/** Why a `deps`/`outs` entry does not name a place inside the experiment's folder, or undefined. */
function placeProblem(field: 'deps' | 'outs', path: string): string | undefined {
  const problem = pathProblem(path);
  if (problem === 'absolute') return `${path} is an absolute path (${field} are relative paths inside the experiment folder)`;
  if (problem === 'outside') return `${path} leaves the experiment folder (${field} are relative paths inside it)`;
  // A whole-folder dependency is fine; copying the folder into its own output is not.
  if (problem === 'itself' && field === 'outs') return `${path} names the experiment folder itself (outs are relative paths inside it)`;
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

  async keyExtras(params, ctx) {
    const deps: Record<string, string> = {};
    let namesPython = [params.run, ...Object.values(params.env).map(String)].some((s) => s.includes(PYTHON_VAR));
    for (const [i, dep] of params.deps.entries()) {
      const full = resolve(ctx.experimentDir, dep);
      const st = await stat(full).catch(() => null);
      // Checked at validation; the file may have gone since.
      if (!st) throw new ParamError(['deps', i], missingDep(dep, full));
      deps[dep] = st.isDirectory() ? sha256(canonicalJson(await listFiles(full))) : await hashFile(full);
      if (!namesPython && st.isFile() && st.size <= SCRIPT_MAX_BYTES) namesPython = (await readFile(full, 'utf8')).includes(PYTHON_VAR);
    }
    const model = params.model ? modelIdentity(ctx.models[params.model]) : null;
    const reward = params.reward ? rewardFormula(params.reward, ctx.rewards) : null;
    // A command reaches the project's interpreter only through $MLEPIPE_PYTHON:
    // one that names it (in run:, env: or a script among its deps) is keyed on
    // the Python environment as well; one that does not (its own tools, other
    // interpreters) keeps its key when the environment changes.
    return { deps, model, reward, ...(namesPython ? { python: await ctx.python() } : {}) };
  },

  async run(ctx) {
    const p = ctx.params;
    const env: Record<string, string> = {
      MLEPIPE_NODE: ctx.node.id,
      MLEPIPE_OUT: ctx.outDir,
      MLEPIPE_ITEMS: ctx.items.root,
      MLEPIPE_PARAMS: JSON.stringify(p.params),
      MLEPIPE_INPUTS: JSON.stringify(Object.fromEntries(ctx.inputs.map((i) => [i.name, i.dir]))),
    };
    if (ctx.python) env.MLEPIPE_PYTHON = ctx.python;
    for (const input of ctx.inputs) env[inputEnvName(input.name)] = input.dir;
    if (p.model) Object.assign(env, modelEnv(ctx.models[p.model], process.env));
    for (const [k, v] of Object.entries(p.env)) env[k] = String(v);

    // Its own process group, so a timeout or Ctrl-C takes down everything it
    // started; the command starts once the group is held (core/reaper.ts).
    const [gate, ...argv] = gated(['bash', '-c', p.run]);
    const child = execa(gate, argv, {
      cwd: ctx.experimentDir,
      env,
      detached: true,
      reject: false,
      stdin: 'pipe',
      all: true,
      buffer: false,
    });
    const held = reapGroup(child);
    const lines = async () => {
      for await (const line of child.iterable({ from: 'all' })) ctx.log(String(line));
    };
    let timedOut = false;
    const timer = p.timeout_s
      ? setTimeout(() => {
          timedOut = true;
          killTree(child.pid);
        }, p.timeout_s * 1000)
      : undefined;
    const stopAbort = onceAborted(ctx.signal, () => killTree(child.pid));
    // Background processes the command left behind would hold its output
    // open forever: once the command itself exits, its whole group goes.
    child.once('exit', () => {
      killGroupNow(child.pid);
      void held.then((release) => release());
    });
    const [result] = await Promise.all([child, lines()]);
    clearTimeout(timer);
    stopAbort();

    if (ctx.signal.aborted) throw new Error('interrupted');
    if (timedOut) throw new Error(`command timed out after ${p.timeout_s}s`);
    if (result.exitCode !== 0) {
      throw new Error(result.signal ? `command killed by ${result.signal}` : `command exited with code ${result.exitCode}`);
    }
    for (const out of p.outs) {
      // Refused at validation already; checked again where the write happens,
      // because the command may have left symlinks in its output folder.
      const problem = placeProblem('outs', out);
      if (problem) throw new Error(`outs: ${problem}`);
      const from = resolve(ctx.experimentDir, out);
      if (!(await exists(from))) throw new Error(`declared output ${out} was not written`);
      const to = await resolveInside(ctx.outDir, out).catch((err: unknown) => {
        throw err instanceof OutsideError ? new Error(`outs: ${out} leads outside the node's output folder (${err.message})`) : err;
      });
      await cp(from, to, { recursive: true });
    }
    const metrics = (await readMetrics(join(ctx.outDir, 'metrics.json'))) ?? {};
    if (p.reward) metrics.reward = rewardOf(rewardFormula(p.reward, ctx.rewards)!, metrics);
    return { metrics };
  },
};

/** The endpoint as the openai SDKs read it, plus the whole entry for anything else. */
function modelEnv(m: ModelSpec, outer: NodeJS.ProcessEnv): Record<string, string> {
  const env: Record<string, string> = { MLEPIPE_MODEL: JSON.stringify(m) };
  if (m.base_url) env.OPENAI_BASE_URL = m.base_url;
  const key = m.api_key_env ? outer[m.api_key_env] : undefined;
  if (key) env.OPENAI_API_KEY = key;
  return env;
}

/** Evaluates a reward formula over the numeric (or boolean) metrics named like reward variables. */
function rewardOf(formula: string, metrics: Metrics): number {
  const vars: Record<string, number> = {};
  for (const v of REWARD_VARIABLES) {
    const x = metrics[v];
    if (typeof x === 'number') vars[v] = x;
    else if (typeof x === 'boolean') vars[v] = x ? 1 : 0;
  }
  return evaluate(parseFormula(formula), vars);
}

async function readMetrics(file: string): Promise<Metrics | undefined> {
  if (!(await exists(file))) return undefined;
  let data: unknown;
  try {
    data = JSON.parse(await readFile(file, 'utf8'));
  } catch (err) {
    throw new Error(`metrics.json is not valid JSON: ${(err as Error).message}`);
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data)) throw new Error('metrics.json must hold one JSON object');
  const metrics: Metrics = {};
  for (const [k, v] of Object.entries(data)) {
    if (v !== null && !['number', 'string', 'boolean'].includes(typeof v)) {
      throw new Error(`metrics.json: "${k}" must be a number, string, boolean or null`);
    }
    metrics[k] = v as Metrics[string];
  }
  return metrics;
}
