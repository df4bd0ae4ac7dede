// The aira-dojo adapter (facebookresearch/aira-dojo, as SandMLE ran it for Table 2): MLE-bench's data layout
// under MLE_BENCH_DATA_DIR, a Hydra experiment of our own written from the overlay's (config.ts), the run
// started as `python -m dojo.main_run +_exp=mlepipe`, the journal read back (journal.ts). aira-dojo grades
// every step and deletes its submission.csv after, so the run's final submission is made again by running its
// best node's code once more on the public data, as aira-dojo's own evaluate_fitness does.
import { existsSync } from 'node:fs';
import { mkdir, realpath, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { HarnessAdapter, HarnessCompetition, HarnessOutcome, HarnessRun } from '../adapter.js';
import { exitFailure, runHarnessProcess } from '../process.js';
import { experimentFiles, solverDefaults, writeRunConfig } from './config.js';
import { bestNode, harnessScore, JOURNAL, readJournal } from './journal.js';

/** The solvers SandMLE's overlay sets up (Table 2). */
const SOLVERS = ['aide_greedy', 'aira_greedy'] as const;

/** <dir>/<id>/prepared/{public,private}, as MLE-bench's prepare writes it and aira-dojo's task reads it. */
async function layout(competitions: readonly HarnessCompetition[], dir: string): Promise<string> {
  for (const c of competitions) {
    await mkdir(join(dir, c.id, 'prepared'), { recursive: true });
    await symlink(await realpath(c.publicDir), join(dir, c.id, 'prepared', 'public'), 'dir');
    await symlink(await realpath(c.privateDir), join(dir, c.id, 'prepared', 'private'), 'dir');
  }
  return dir;
}

async function prepare(run: HarnessRun) {
  const defaults = await solverDefaults(await experimentFiles(run.settings));
  const configDir = await writeRunConfig(run, defaults);
  return {
    argv: [run.settings.python, '-m', 'dojo.main_run', '--config-dir', configDir, '+_exp=mlepipe'],
    // Its metadata asks git for the commit of the folder it runs in.
    cwd: run.settings.checkout,
    env: {
      // Its metadata reads both from the environment (oc.env), and a run without them does not start.
      USER: process.env.USER ?? 'mlepipe',
      PWD: run.settings.checkout,
      PYTHONPATH: join(run.settings.checkout, 'src'),
      MLE_BENCH_DATA_DIR: run.layout,
      LOGGING_DIR: join(run.dir, 'logs'),
      SUPERIMAGE_DIR: join(run.dir, 'logs'),
      OPENAI_API_KEY: run.policy.apiKey ?? 'none',
      PRIMARY_KEY: run.policy.apiKey ?? 'none',
      WANDB_MODE: 'disabled',
      HYDRA_FULL_ERROR: '1',
      PYTHONDONTWRITEBYTECODE: '1',
    },
  };
}

/** Runs the best node's code again in <run>/final with ./data the public data; returns the submission. */
async function remake(run: HarnessRun, code: string): Promise<{ submission?: string; failure?: string }> {
  const dir = join(run.dir, 'final');
  await mkdir(dir, { recursive: true });
  await symlink(await realpath(run.competition.publicDir), join(dir, 'data'), 'dir');
  await writeFile(join(dir, 'solution.py'), code);
  const exit = await runHarnessProcess(
    { argv: [run.settings.python, 'solution.py'], cwd: dir, env: {} },
    { timeoutMs: run.settings.timePerRunS * 1000, signal: run.signal, log: join(dir, 'solution.log') },
  );
  const failed = exitFailure(exit, "the best node's code, run again", run.settings.timePerRunS);
  if (failed) return { failure: failed };
  const sub = join(dir, 'submission.csv');
  return existsSync(sub) ? { submission: sub } : { failure: "the best node's code wrote no submission.csv" };
}

async function collect(run: HarnessRun, exit: Parameters<HarnessAdapter['collect']>[1]): Promise<HarnessOutcome> {
  const out = join(run.dir, 'out');
  const nodes = await readJournal(out);
  const journal = nodes ? join('out', JOURNAL) : undefined;
  const failed = exitFailure(exit, 'aira-dojo', run.settings.timePerRunS);
  if (failed) return { journal, steps: nodes?.length, failure: failed };
  if (!nodes) return { failure: `aira-dojo wrote no journal (${join('out', JOURNAL)})` };
  const best = bestNode(nodes);
  const base = { journal, steps: nodes.length, harnessScore: harnessScore(best) };
  if (!best) return { ...base, failure: 'aira-dojo found no valid solution (no good node with a metric)' };
  return { ...base, ...(await remake(run, best.code)) };
}

export const airaDojo = {
  name: 'aira-dojo',
  description: "facebookresearch/aira-dojo's greedy solvers (AIDE and AIRA operators) on MLE-bench",
  solvers: SOLVERS,
  grader: 'mlebench',
  checkoutFiles: ['src/dojo/main_run.py', 'src/dojo/configs/default_run.yaml', 'src/dojo/solvers/greedy/greedy.py'],
  modules: ['hydra', 'omegaconf', 'litellm', 'mlebench', 'dataclasses_json', 'torch', 'transformers'],
  configFiles: experimentFiles,
  layout,
  prepare,
  collect,
} satisfies HarnessAdapter;
