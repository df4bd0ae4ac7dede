// The MLE-Dojo adapter (MLE-Dojo/MLE-Dojo, as SandMLE ran it for Table 3): its own AIDE and its MLE-Agent, each
// started as the overlay's run scripts start them (`python main.py --agent-type mle|aide ...`), with the agent's
// config.yaml written from the SandMLE overlay's copy. MLE-Dojo grades every execute_code against the hidden
// answers itself; the run's grade is MLE-Dojo's own (its scorer and its HumanRank over the private and public
// leaderboards), done again on the run's archived submissions by python/mledojo_driver.py with the checkout's
// code and compared with what the env recorded. The driver does the Python side; this file says what to call.
import { existsSync } from 'node:fs';
import { readFile, realpath } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { assetPath } from '../../../core/assets.js';
import { EnvError } from '../../../core/errors.js';
import type { HarnessAdapter, HarnessCompetition, HarnessOutcome, HarnessRun, HarnessSettings } from '../adapter.js';
import { exitFailure } from '../process.js';
import { readDojoResult } from './result.js';

/** mlepipe's solver name → the overlay's agent config and run script (read at run time for the node key). */
export const MLE_DOJO_SOLVERS = {
  mleagent: ['mledojo/agent/mleagent/config.yaml', 'run_dojo_competitions_parallel.sh'],
  aide: ['mledojo/agent/aide/utils/config.yaml', 'run_dojo_competitions_aide.sh'],
} as const satisfies Record<string, readonly [string, string]>;

const DRIVER = 'python/mledojo_driver.py';

function solverFiles(settings: HarnessSettings): readonly string[] {
  const files = (MLE_DOJO_SOLVERS as Record<string, readonly string[]>)[settings.solver];
  if (!files)
    throw new EnvError(`MLE-Dojo has no solver ${settings.solver} (${Object.keys(MLE_DOJO_SOLVERS).join(', ')})`);
  return files;
}

/** The overlay's files this solver reads; without an overlay, the checkout's own agent config. */
async function configFiles(settings: HarnessSettings): Promise<string[]> {
  const [config, script] = solverFiles(settings);
  if (!settings.overlay) return [join(settings.checkout, config)];
  const files = [join(settings.overlay, config), join(settings.overlay, script)];
  const missing = files.filter((f) => !existsSync(f));
  if (missing.length) throw new EnvError(`the SandMLE overlay for MLE-Dojo lacks ${missing.join(', ')}`);
  return files;
}

async function driver(python: string, args: string[], signal?: AbortSignal): Promise<string> {
  // Loaded here, not at the top: the adapter table is read by plan and validate, which never load execa.
  const { execa } = await import('execa');
  const r = await execa(python, [assetPath(DRIVER), ...args], { reject: false, cancelSignal: signal, all: true });
  if (r.exitCode !== 0)
    throw new EnvError(
      `${DRIVER} ${args[0]} failed (exit ${r.exitCode}): ${String(r.all).trim().split('\n').slice(-3).join(' / ')}`,
    );
  return String(r.stdout);
}

/**
 * Where MLE-Dojo's data for a competition comes from: the harness's own prepared data (`data:`, MLE-Dojo's
 * <id>/data/{public,private}) when it holds the competition, else the Kaggle download MLE-bench keeps beside
 * its prepared folders (<data>/<id>/raw), split by MLE-Dojo's own prepare().
 */
async function source(c: HarnessCompetition, settings: HarnessSettings): Promise<string[]> {
  if (settings.data && existsSync(join(settings.data, c.id, 'data', 'public')))
    return ['--prepared', join(settings.data, c.id, 'data')];
  const raw = join(dirname(dirname(await realpath(c.publicDir))), 'raw');
  if (existsSync(raw)) return ['--raw', raw];
  throw new EnvError(
    `no MLE-Dojo data for ${c.id}: neither ${settings.data ? join(settings.data, c.id, 'data') : 'a data: folder'} nor MLE-bench's raw download at ${raw}`,
  );
}

/** <dir>/<id>/data/{public,private} for every competition, as MLE-Dojo's env opens one. */
async function layout(competitions: readonly HarnessCompetition[], dir: string, settings: HarnessSettings) {
  for (const c of competitions) {
    const from = await source(c, settings);
    await driver(settings.python, [
      'layout',
      '--checkout',
      settings.checkout,
      '--dest',
      dir,
      '--competition',
      c.id,
      ...from,
    ]);
  }
  return dir;
}

function runArgs(run: HarnessRun): string[] {
  return ['--checkout', run.settings.checkout, '--data', run.layout, '--competition', run.competition.id];
}

async function prepare(run: HarnessRun) {
  const s = run.settings;
  const args = ['setup', ...runArgs(run), '--solver', s.solver, '--run', run.dir, '--python', s.python];
  args.push('--base-url', run.policy.baseUrl, '--model', run.policy.model, '--time-s', String(s.timePerRunS));
  if (run.policy.apiKey) args.push('--api-key', run.policy.apiKey);
  if (s.overlay) args.push('--overlay', s.overlay);
  for (const [k, v] of Object.entries(s.overrides)) args.push('--set', `${k}=${String(v)}`);
  await driver(s.python, args, run.signal);
  const env: Record<string, string> = {};
  // MLE-Agent counts its prompt's tokens with tiktoken, which fetches its table unless it is cached.
  if (process.env.TIKTOKEN_CACHE_DIR) env.TIKTOKEN_CACHE_DIR = process.env.TIKTOKEN_CACHE_DIR;
  return { argv: [s.python, assetPath(DRIVER), 'exec', '--run', run.dir], cwd: run.dir, env };
}

async function collect(run: HarnessRun, exit: Parameters<HarnessAdapter['collect']>[1]): Promise<HarnessOutcome> {
  const args = ['grade', ...runArgs(run), '--solver', run.settings.solver, '--run', run.dir];
  if (exit.code !== null) args.push('--exit-code', String(exit.code));
  if (exit.timedOut) args.push('--timed-out');
  await driver(run.settings.python, args, run.signal);
  const result = readDojoResult(await readFile(join(run.dir, 'result.json'), 'utf8'), join(run.dir, 'result.json'));
  const failed = exitFailure(exit, 'MLE-Dojo', run.settings.timePerRunS);
  return {
    journal: result.journal ?? undefined,
    steps: result.steps,
    harnessScore: result.harness.best_position_score,
    ...(result.valid
      ? { submission: join(run.dir, 'submission.csv'), dojo: { score: result.raw_score, humanRank: result.human_rank } }
      : { failure: failed ? `${failed}: ${result.failure}` : result.failure }),
  };
}

export const mleDojo = {
  name: 'mle-dojo',
  description: "MLE-Dojo's own AIDE and MLE-Agent on MLE-Dojo's competitions, graded by MLE-Dojo (HumanRank)",
  solvers: Object.keys(MLE_DOJO_SOLVERS),
  grader: 'mledojo',
  checkoutFiles: ['main.py', 'mledojo/gym/env.py', 'mledojo/gym/interface.py', 'mledojo/competitions/registry.py'],
  // What main.py imports before it starts an agent (it imports every agent's module), less the checkout itself.
  modules: [
    'gymnasium',
    'omegaconf',
    'openai',
    'anthropic',
    'google.genai',
    'agents',
    'tiktoken',
    'coolname',
    'igraph',
  ],
  configFiles,
  layout,
  prepare,
  collect,
} satisfies HarnessAdapter;
