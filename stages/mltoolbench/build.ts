// One instance of the MLToolBench-style suite, built into its item folder: the generator runs in the sandbox
// (its starter runs are untrusted-shaped code, and it writes only to the workspace), then the finished folder
// is checked by grading its sample submission with its own evaluator on the host.
import { cp, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { assetPath } from '../../core/assets.js';
import { isObject, readJson } from '../../core/json-files.js';
import type { Sandbox } from '../../sandbox/index.js';
import { runEvaluator } from '../../tasks/evaluate.js';
import type { SuiteInstance } from '../../tasks/mltoolbench.js';
import type { StageContext } from '../contract.js';
import type { MltoolbenchParams } from './index.js';

/** What task_manifest.json records of one instance. */
export interface Built {
  id: string;
  template: string;
  split: string;
  ok: boolean;
  baseline?: { mean: number; std: number; runs: number };
  /** The seed the instance was built from, when the attainability check drew it again. */
  generation?: { registered_seed: number; seed: number; redrawn: number };
  /** False when not even the reference (the fix, or for a healthy instance the generator's Bayes oracle) passes Eq. 5's line. */
  attainable?: boolean;
  error?: string;
}

const LAUNCHER = `import os, sys
for v in ('OMP_NUM_THREADS', 'OPENBLAS_NUM_THREADS', 'MKL_NUM_THREADS'):
    os.environ[v] = '1'
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mltoolbench.cli import main
main()
`;

/** Runs the suite's generator for `inst` in a sandbox session; its error, or undefined once the task is in `d`. */
async function generate(
  ctx: StageContext<MltoolbenchParams>,
  sandbox: Sandbox,
  empty: string,
  inst: SuiteInstance,
  d: string,
): Promise<string | undefined> {
  const session = await sandbox.open({ task: empty, signal: ctx.signal });
  try {
    const ws = session.workspace;
    await cp(assetPath('tasks/py/mltoolbench'), join(ws, 'mltoolbench'), {
      recursive: true,
      filter: (src) => !src.includes('__pycache__'),
    });
    await writeFile(join(ws, 'build_suite.py'), LAUNCHER);
    const r = await session.run(
      { file: 'build_suite.py', args: ['build', inst.id, '--out', 'out', '--runs', String(ctx.params.runs)] },
      { timeoutMs: 900_000, memoryMb: 4096 },
    );
    if (r.exitCode !== 0)
      return `the generator failed (exit ${r.exitCode}): ${r.stderr.trim().split('\n').slice(-3).join(' | ')}`;
    await cp(join(ws, 'out', inst.id), join(d, 'task'), { recursive: true });
    return undefined;
  } finally {
    await session.close();
  }
}

/** Builds `inst` into the item folder `d` and checks it; what the manifest says of it. */
export async function buildOne(
  ctx: StageContext<MltoolbenchParams>,
  sandbox: Sandbox,
  empty: string,
  inst: SuiteInstance,
  d: string,
): Promise<Built> {
  const head = { id: inst.id, template: inst.template, split: inst.split };
  const failed = await generate(ctx, sandbox, empty, inst, d);
  if (failed) return { ...head, ok: false, error: failed };
  const sample = await runEvaluator(join(d, 'task'), ctx.python);
  if (!sample.ok) return { ...head, ok: false, error: `the sample submission does not grade: ${sample.error}` };
  const task = await readJson<{ baseline: Built['baseline']; generation?: Built['generation'] }>(
    join(d, 'task', 'task.json'),
    isObject,
  );
  const reach = await readJson<{ attainable: boolean }>(join(d, 'task', 'private', 'attainability.json'), isObject);
  return {
    ...head,
    ok: true,
    baseline: task.baseline,
    ...(task.generation ? { generation: task.generation } : {}),
    attainable: reach.attainable,
  };
}
