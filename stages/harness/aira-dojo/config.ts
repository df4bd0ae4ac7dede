// aira-dojo's configuration for one run, as Hydra composes it: an experiment file of our own (`_exp/mlepipe.yaml`)
// in a config folder added to Hydra's search path, and a client file pointing the solver's operators at the
// policy endpoint. The solver's settings come from the experiment files of the SandMLE overlay (read at run
// time; the folder the user names), or, without an overlay, from the checkout's own experiment of that solver.
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse as parseYaml, stringify } from 'yaml';
import { EnvError } from '../../../core/errors.js';
import type { HarnessRun, HarnessSettings } from '../adapter.js';

/** Where experiment files live, under a checkout's or an overlay's root. */
export const EXP_DIR = 'src/dojo/configs/_exp/mlebench';
/** The client file our experiment names for every operator. */
export const CLIENT_NAME = 'mlepipe_policy';
/** The operators whose LLM client an experiment chooses. */
const OPERATORS = ['analyze', 'debug', 'draft', 'improve'] as const;

/** The experiment files a solver is read from: the overlay's `<solver>_*.yaml`, else the checkout's. */
export async function experimentFiles(settings: Pick<HarnessSettings, 'solver' | 'overlay' | 'checkout'>) {
  const root = settings.overlay ?? settings.checkout;
  const dir = join(root, EXP_DIR);
  if (!existsSync(dir)) throw new EnvError(`${dir} does not exist: no aira-dojo experiment files there`);
  const files = (await readdir(dir)).filter((f) => f.startsWith(`${settings.solver}_`) && f.endsWith('.yaml')).sort();
  if (!files.length) throw new EnvError(`no ${settings.solver}_*.yaml in ${dir}`);
  return files.map((f) => join(dir, f));
}

/** A defaults entry the run takes from an experiment: every one but the benchmark and the operators' clients. */
function keptDefault(entry: unknown): boolean {
  if (typeof entry === 'string') return true;
  const key = Object.keys(entry as object)[0] ?? '';
  return !key.includes('/benchmark') && !key.startsWith('override /solver/client@') && !key.includes('/task');
}

/**
 * The solver's defaults list, shared by every experiment file of the solver (they differ only in the model
 * they talk to; a difference beyond that is refused, since which one the run stands for would be a guess).
 */
export async function solverDefaults(files: readonly string[]): Promise<unknown[]> {
  let kept: unknown[] | undefined;
  for (const f of files) {
    const doc = (parseYaml(await readFile(f, 'utf8')) ?? {}) as { defaults?: unknown[] };
    const mine = (doc.defaults ?? []).filter(keptDefault);
    if (kept && JSON.stringify(kept) !== JSON.stringify(mine))
      throw new EnvError(`${f}: its solver settings differ from ${files[0]}'s; name the solver more narrowly`);
    kept = mine;
  }
  return kept ?? [];
}

/** The interpreter entry: the overlay's choice, forced to `python` (the Jupyter one needs an Apptainer image). */
function withPythonInterpreter(defaults: readonly unknown[]): unknown[] {
  const out = defaults.filter((d) => !(typeof d === 'object' && d && 'override /interpreter' in d));
  return [{ 'override /interpreter': 'python' }, ...out];
}

/** Writes the run's Hydra config folder; returns it. */
export async function writeRunConfig(run: HarnessRun, defaults: readonly unknown[]): Promise<string> {
  const dir = join(run.dir, 'config');
  await mkdir(join(dir, '_exp'), { recursive: true });
  await mkdir(join(dir, 'solver', 'client'), { recursive: true });
  const client = {
    _target_: 'dojo.config_dataclasses.client.base.ClientConfig',
    api: 'litellm',
    model_id: run.policy.model,
    base_url: run.policy.baseUrl,
    use_azure_client: false,
    provider: 'selfhosted',
  };
  await writeFile(join(dir, 'solver', 'client', `${CLIENT_NAME}.yaml`), stringify(client));
  const exp = {
    defaults: [
      ...withPythonInterpreter(defaults),
      { 'override /task': 'mlebench/_default' },
      ...OPERATORS.map((op) => ({ [`override /solver/client@solver.operators.${op}.llm.client`]: CLIENT_NAME })),
    ],
    metadata: { git_issue_id: `mlepipe_${run.settings.solver}`, seed: run.seed },
    task: { name: run.competition.id, cache_dir: run.layout },
    // Its environment file would copy an API key into the node's outputs.
    logger: { output_dir: join(run.dir, 'out'), use_wandb: false, print_config: false, write_env_vars: false },
    solver: { time_limit_secs: run.settings.timePerRunS, ...run.settings.overrides },
  };
  await writeFile(join(dir, '_exp', 'mlepipe.yaml'), '# @package _global_\n' + stringify(exp));
  return dir;
}
