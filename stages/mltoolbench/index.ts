// `uses: mltoolbench`: the fault-injected task suite (tasks/py/mltoolbench/) as
// task folders for eval and grpo stages: each instance's data, starter
// train.py, grader and starter baseline, built by the Python generator in the
// sandbox. With manifest:, a released task_manifest.json and its instance
// folders are imported instead.
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { assetPath } from '../../core/assets.js';
import { listFiles, statListing } from '../../core/fs.js';
import { canonicalJson, sha256 } from '../../core/hash.js';
import schema from '../../schemas/stages/mltoolbench.schema.json';
import { selectInstances, suiteTemplates, type SUITE_DOMAINS, type SuiteSplit } from '../../tasks/mltoolbench.js';
import type { ParamIssue, Stage } from '../contract.js';
import { lazyRun } from '../lazy.js';
import { mltoolbenchSize } from './size.js';

export interface MltoolbenchParams {
  split: SuiteSplit | 'all';
  templates?: string[];
  domains?: Array<(typeof SUITE_DOMAINS)[number]>;
  limit?: number;
  runs: number;
  concurrency: number;
  manifest?: string;
  data?: string;
}

/** The generator's files by content (bytecode caches left out: they differ between runs, not in meaning). */
export async function generatorDigest(): Promise<string> {
  const files = await listFiles(assetPath('tasks/py/mltoolbench'), (rel) => rel.includes('__pycache__'));
  return sha256(canonicalJson(files.map((f) => [f.path, f.sha256])));
}

export const mltoolbench: Stage<MltoolbenchParams> = {
  kind: 'mltoolbench',
  version: 1,
  description:
    'The fault-injected MLToolBench-style suite (20 templates x 4 configurations, 25 ID, 10 OOD) as tasks, or an import of a released manifest.',
  schema,
  flow: { gives: ['tasks'] },
  keyIgnore: ['concurrency'],

  check(p, ctx) {
    const issues: ParamIssue[] = [];
    // A released manifest may name templates of its own; only the built-in suite's are known here.
    const known = suiteTemplates();
    if (!p.manifest) {
      (p.templates ?? []).forEach((t, i) => {
        if (!known.includes(t))
          issues.push({ param: ['templates', i], message: `unknown template ${t} (known: ${known.join(', ')})` });
      });
    }
    if (p.manifest) {
      if (!p.data)
        issues.push({
          param: ['manifest'],
          message: 'manifest: needs data: (the folder of the instances it lists)',
          also: ['data'],
        });
      if (!existsSync(resolve(ctx.experimentDir, p.manifest)))
        issues.push({ param: ['manifest'], message: `manifest: ${p.manifest} does not exist` });
    } else if (p.data) {
      issues.push({ param: ['data'], message: 'data: is read only with manifest:', also: ['manifest'] });
    }
    if (!issues.length && !p.manifest && !selectInstances(p).length) {
      issues.push({
        param: ['split'],
        message: `no ${p.split} instance matches these templates and domains`,
        also: ['templates', 'domains'],
      });
    }
    return issues;
  },

  // An import reads the released manifest and its instances' folder; the built-in suite needs nothing here.
  preflight: (p) => [
    ...(p.manifest ? [{ what: 'released task manifest', path: p.manifest, param: ['manifest'] }] : []),
    ...(p.manifest && p.data ? [{ what: 'released instances folder', path: p.data, param: ['data'] }] : []),
  ],

  async keyExtras(p, ctx) {
    if (p.manifest) {
      const file = resolve(ctx.experimentDir, p.manifest);
      const data = resolve(ctx.experimentDir, p.data ?? '.');
      // Instance files by name, size and time: released data may be large, and it is written once.
      return { manifest: sha256(await readFile(file)), files: existsSync(data) ? await statListing(data) : [] };
    }
    return {
      generator: await generatorDigest(),
      instances: selectInstances(p).map((i) => i.id),
      python: await ctx.python(),
    };
  },

  size: mltoolbenchSize,
  run: lazyRun(() => import('./run.js')),
};
