// The mltoolbench stage's run(): one item checkpoint per instance. The
// generator runs in the sandbox (its starter runs are untrusted-shaped code,
// and it writes only to the workspace); the finished folder is checked by
// grading its sample submission with its own evaluator on the host.
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { assetPath } from '../../core/assets.js';
import { linkTree } from '../../core/fs.js';
import { mapLimit } from '../../core/pool.js';
import { runEvaluator } from '../../tasks/evaluate.js';
import { importInstance, instanceProblem, readSuiteManifest } from '../../tasks/mltoolbench-import.js';
import { selectInstances, suiteInstances, SUITE_MODULES, type SuiteInstance } from '../../tasks/mltoolbench.js';
import type { StageContext, StageResult } from '../contract.js';
import { stageSandbox } from '../shared/sandbox.js';
import type { MltoolbenchParams } from './index.js';

interface Built {
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

export async function run(ctx: StageContext<MltoolbenchParams>): Promise<StageResult | void> {
  if (ctx.params.manifest) return importRun(ctx);
  const p = ctx.params;
  const python = ctx.python;
  const picked = selectInstances(p);
  await mkdir(join(ctx.outDir, 'tasks'));
  const empty = await mkdtemp(join(tmpdir(), 'mlepipe-mltb-'));
  await mkdir(join(empty, 'public'));
  // The generator and its starters import the suite's stack only (no torch, no XGBoost).
  const sandbox = stageSandbox(ctx, Math.min(p.concurrency, picked.length), SUITE_MODULES);
  let done = 0;
  const buildOne = async (inst: SuiteInstance, d: string): Promise<Built> => {
    const session = await sandbox.open({ task: empty, signal: ctx.signal });
    try {
      const ws = session.workspace;
      await cp(assetPath('tasks/py/mltoolbench'), join(ws, 'mltoolbench'), {
        recursive: true,
        filter: (src) => !src.includes('__pycache__'),
      });
      await writeFile(join(ws, 'build_suite.py'), LAUNCHER);
      const r = await session.run(
        { file: 'build_suite.py', args: ['build', inst.id, '--out', 'out', '--runs', String(p.runs)] },
        { timeoutMs: 900_000, memoryMb: 4096 },
      );
      if (r.exitCode !== 0)
        return {
          id: inst.id,
          template: inst.template,
          split: inst.split,
          ok: false,
          error: `the generator failed (exit ${r.exitCode}): ${r.stderr.trim().split('\n').slice(-3).join(' | ')}`,
        };
      await cp(join(ws, 'out', inst.id), join(d, 'task'), { recursive: true });
    } finally {
      await session.close();
    }
    const sample = await runEvaluator(join(d, 'task'), python);
    if (!sample.ok)
      return {
        id: inst.id,
        template: inst.template,
        split: inst.split,
        ok: false,
        error: `the sample submission does not grade: ${sample.error}`,
      };
    const task = JSON.parse(await readFile(join(d, 'task', 'task.json'), 'utf8')) as {
      baseline: Built['baseline'];
      generation?: Built['generation'];
    };
    const reach = JSON.parse(await readFile(join(d, 'task', 'private', 'attainability.json'), 'utf8')) as {
      attainable: boolean;
    };
    return {
      id: inst.id,
      template: inst.template,
      split: inst.split,
      ok: true,
      baseline: task.baseline,
      ...(task.generation ? { generation: task.generation } : {}),
      attainable: reach.attainable,
    };
  };
  let built: Built[];
  try {
    const results = await mapLimit(
      picked,
      p.concurrency,
      async (inst) => {
        let dir = await ctx.items.get(inst.id);
        if (!dir) {
          dir = await ctx.items.put(inst.id, async (d) => {
            const r = await buildOne(inst, d);
            if (ctx.signal.aborted) throw new Error('interrupted');
            await writeFile(join(d, 'result.json'), JSON.stringify(r, null, 2) + '\n');
          });
        }
        const r = JSON.parse(await readFile(join(dir, 'result.json'), 'utf8')) as Built;
        // Linked, not copied: a finished item is as final as the node (an image instance has a thousand files).
        if (r.ok) await linkTree(join(dir, 'task'), join(ctx.outDir, 'tasks', r.id));
        else ctx.log(`${r.id}: ${r.error}`);
        ctx.progress(++done, picked.length);
        return r;
      },
      ctx.signal,
    );
    built = results.filter((r): r is Built => r !== undefined);
  } finally {
    await sandbox.shutdown();
    await rm(empty, { recursive: true, force: true });
  }
  if (ctx.signal.aborted) throw new Error('interrupted');
  // The whole suite's index, like the paper's: every instance with its template and split, built or not.
  const all = suiteInstances().map(({ id, template, split, domain, seed }) => ({
    id,
    template,
    split,
    domain,
    seed,
    built: built.some((b) => b.id === id && b.ok),
  }));
  await writeFile(
    join(ctx.outDir, 'task_manifest.json'),
    JSON.stringify(
      {
        version: 'mltb-v1',
        selection: {
          split: p.split,
          templates: p.templates ?? null,
          domains: p.domains ?? null,
          limit: p.limit ?? null,
        },
        instances: all,
        built,
      },
      null,
      2,
    ) + '\n',
  );
  const ok = built.filter((b) => b.ok).length;
  if (!ok) throw new Error(`no instance could be built: ${built.map((b) => `${b.id}: ${b.error}`).join('; ')}`);
  // Kept, as the paper keeps them, but a success rate over them has a ceiling below 100%: say which.
  const out = built.filter((b) => b.ok && b.attainable === false).map((b) => b.id);
  if (out.length)
    ctx.log(
      `${out.length} of ${ok} instances are out of reach: not even the generator's own best prediction (or the fix) passes Eq. 5's line (${out.join(', ')}); see each task's private/attainability.json`,
    );
  return { metrics: { instances: picked.length, tasks: ok, failed: picked.length - ok, out_of_reach: out.length } };
}

async function importRun(ctx: StageContext<MltoolbenchParams>): Promise<StageResult> {
  const p = ctx.params;
  const entries = await readSuiteManifest(resolve(ctx.experimentDir, p.manifest!));
  const data = resolve(ctx.experimentDir, p.data!);
  const wanted = entries.filter(
    (e) =>
      (p.split === 'all' || e.split === p.split) && (!p.templates || (e.template && p.templates.includes(e.template))),
  );
  const chosen = p.limit ? wanted.slice(0, p.limit) : wanted;
  const problems = chosen.map((e) => [e.id, instanceProblem(join(data, e.id))] as const).filter(([, why]) => why);
  if (problems.length) {
    const shown = problems
      .slice(0, 5)
      .map(([id, why]) => `${id}: ${why}`)
      .join('; ');
    throw new Error(
      `${problems.length} of ${chosen.length} instances of ${p.manifest} have no usable data under ${p.data} (${shown}${problems.length > 5 ? '; …' : ''})`,
    );
  }
  await mkdir(join(ctx.outDir, 'tasks'));
  for (const [i, e] of chosen.entries()) {
    await importInstance(e, join(data, e.id), join(ctx.outDir, 'tasks', e.id));
    ctx.progress(i + 1, chosen.length);
  }
  await writeFile(
    join(ctx.outDir, 'task_manifest.json'),
    JSON.stringify(
      {
        imported_from: p.manifest,
        instances: entries.map((e) => ({ id: e.id, template: e.template, split: e.split, built: chosen.includes(e) })),
      },
      null,
      2,
    ) + '\n',
  );
  return { metrics: { instances: entries.length, tasks: chosen.length, failed: 0 } };
}
