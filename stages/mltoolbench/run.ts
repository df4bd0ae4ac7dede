// The mltoolbench stage's run(): one item checkpoint per instance, each built
// by the suite's generator in the sandbox and checked (build.ts), or imported
// from a released manifest (import.ts).
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { StageFailure } from '../../core/errors.js';
import { linkTree } from '../../core/fs.js';
import { isObject, readJson } from '../../core/json-files.js';
import { mapLimit } from '../../core/pool.js';
import { selectInstances, suiteInstances, SUITE_MODULES, type SuiteInstance } from '../../tasks/mltoolbench.js';
import type { StageContext, StageResult } from '../contract.js';
import { announceKept } from '../shared/resume.js';
import { stageSandbox } from '../shared/sandbox.js';
import { buildOne, type Built } from './build.js';
import { importRun } from './import.js';
import type { MltoolbenchParams } from './index.js';

/** Builds every picked instance (or reads its item back), linking each built one into tasks/. */
async function buildAll(ctx: StageContext<MltoolbenchParams>, picked: readonly SuiteInstance[]): Promise<Built[]> {
  const p = ctx.params;
  const empty = await mkdtemp(join(tmpdir(), 'mlepipe-mltb-'));
  await mkdir(join(empty, 'public'));
  // The generator and its starters import the suite's stack only (no torch, no XGBoost).
  const sandbox = stageSandbox(ctx, Math.min(p.concurrency, picked.length), SUITE_MODULES);
  await announceKept(
    ctx,
    picked.map((inst) => inst.id),
    'tasks',
  );
  let done = 0;
  try {
    const results = await mapLimit(
      picked,
      p.concurrency,
      async (inst) => {
        const dir =
          (await ctx.items.get(inst.id)) ??
          (await ctx.items.put(inst.id, async (d) => {
            const r = await buildOne(ctx, sandbox, empty, inst, d);
            ctx.signal.throwIfAborted();
            await writeFile(join(d, 'result.json'), JSON.stringify(r, null, 2) + '\n');
          }));
        const r = await readJson<Built>(join(dir, 'result.json'), isObject);
        // Linked, not copied: a finished item is as final as the node (an image instance has a thousand files).
        if (r.ok) await linkTree(join(dir, 'task'), join(ctx.outDir, 'tasks', r.id));
        else ctx.log(`${r.id}: ${r.error}`);
        ctx.progress({ done: ++done, total: picked.length, unit: 'tasks' });
        return r;
      },
      ctx.signal,
    );
    return results.filter((r): r is Built => r !== undefined);
  } finally {
    await sandbox.shutdown();
    await rm(empty, { recursive: true, force: true });
  }
}

/** The whole suite's index, like the paper's: every instance with its template and split, built or not. */
async function writeManifest(ctx: StageContext<MltoolbenchParams>, built: readonly Built[]): Promise<void> {
  const p = ctx.params;
  const all = suiteInstances().map(({ id, template, split, domain, seed }) => ({
    id,
    template,
    split,
    domain,
    seed,
    built: built.some((b) => b.id === id && b.ok),
  }));
  const selection = {
    split: p.split,
    templates: p.templates ?? null,
    domains: p.domains ?? null,
    limit: p.limit ?? null,
  };
  await writeFile(
    join(ctx.outDir, 'task_manifest.json'),
    JSON.stringify({ version: 'mltb-v1', selection, instances: all, built }, null, 2) + '\n',
  );
}

export async function run(ctx: StageContext<MltoolbenchParams>): Promise<StageResult | void> {
  if (ctx.params.manifest) return importRun(ctx);
  const picked = selectInstances(ctx.params);
  await mkdir(join(ctx.outDir, 'tasks'));
  const built = await buildAll(ctx, picked);
  ctx.signal.throwIfAborted();
  await writeManifest(ctx, built);
  const ok = built.filter((b) => b.ok).length;
  if (!ok) throw new StageFailure(`no instance could be built: ${built.map((b) => `${b.id}: ${b.error}`).join('; ')}`);
  // Kept, as the paper keeps them, but a success rate over them has a ceiling below 100%: say which.
  const out = built.filter((b) => b.ok && b.attainable === false).map((b) => b.id);
  if (out.length)
    ctx.log(
      `${out.length} of ${ok} instances are out of reach: not even the generator's own best prediction (or the fix) passes Eq. 5's line (${out.join(', ')}); see each task's private/attainability.json`,
    );
  return { metrics: { instances: picked.length, tasks: ok, failed: picked.length - ok, out_of_reach: out.length } };
}
