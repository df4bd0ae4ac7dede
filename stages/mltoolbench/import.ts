// `manifest:` and `data:`: the suite's instances imported from a released manifest and its data folders
// instead of generated, each checked for usable data first.
import { mkdir, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { ParamError } from '../../core/errors.js';
import { importInstance, instanceProblem, readSuiteManifest } from '../../tasks/mltoolbench-import.js';
import type { StageContext, StageResult } from '../contract.js';
import type { MltoolbenchParams } from './index.js';

export async function importRun(ctx: StageContext<MltoolbenchParams>): Promise<StageResult> {
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
    throw new ParamError(
      ['data'],
      `${problems.length} of ${chosen.length} instances of ${p.manifest} have no usable data under ${p.data} (${shown}${problems.length > 5 ? '; …' : ''})`,
    );
  }
  await mkdir(join(ctx.outDir, 'tasks'));
  for (const [i, e] of chosen.entries()) {
    await importInstance(e, join(data, e.id), join(ctx.outDir, 'tasks', e.id));
    ctx.progress({ done: i + 1, total: chosen.length, unit: 'tasks' });
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
