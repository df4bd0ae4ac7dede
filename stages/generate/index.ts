// `uses: generate`: synthetic micro-scale tasks from seed DNA (SandMLE's
// factory). Each task is an item checkpoint, so a crash or a rerun after a
// kill keeps every finished task; the output is tasks/<id>/ per task plus
// generation.json with the funnel (candidates → generated → evaluator ok).
import { assetsDigest } from '../../core/assets.js';
import { ParamError } from '../../core/errors.js';
import schema from '../../schemas/stages/generate.schema.json';
import { modelIdentity } from '../../core/models.js';
import { selectSeeds, unknownSeeds } from '../../seeds/index.js';
import type { ParamIssue, Stage } from '../contract.js';
import { lazyRun } from '../lazy.js';
import { generateSize } from './size.js';

export interface GenerateParams {
  backend: 'procedural' | 'llm';
  seeds: string | string[];
  count?: number;
  per_seed?: number;
  modalities?: string[];
  samples: [number, number];
  test_fraction?: number;
  scale: 'micro' | 'full';
  full_memory_mb: number;
  seed: number;
  attempts: number;
  concurrency: number;
  model?: string;
  developer_attempts: number;
  evaluator_attempts: number;
  mlebench_dir?: string;
}

/** The llm backend's developer prompt fixes its test size: test_fraction changes nothing there, nor its key. */
export function resolveGenerate(written: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const { test_fraction: _, ...rest } = written;
  return written.backend === 'llm' ? rest : { ...written };
}

const LLM_NEEDS_MODEL = 'backend: llm needs model: (the name of a models: entry)';

export const generate: Stage<GenerateParams> = {
  kind: 'generate',
  version: 2,
  description: 'Synthetic micro-scale ML tasks from seed DNA (the four SandMLE roles, as code or on an LLM).',
  schema,
  flow: { gives: ['tasks'] },
  // Tasks depend on (seed, index) only, not on how many are built at once.
  keyIgnore: ['concurrency'],
  resolve: resolveGenerate,

  check(p) {
    const issues: ParamIssue[] = [];
    if (p.samples[0] > p.samples[1])
      issues.push({ param: ['samples'], message: `samples: ${p.samples[0]} is above ${p.samples[1]}` });
    const unknown = unknownSeeds(p.seeds);
    for (const u of unknown)
      issues.push({ param: u.index === undefined ? ['seeds'] : ['seeds', u.index], message: u.message });
    if (!unknown.length && p.modalities && !selectSeeds(p.seeds, p.modalities).length) {
      const of = typeof p.seeds === 'string' ? p.seeds : 'the listed seeds';
      issues.push({
        param: ['modalities'],
        message: `no seed of ${of} has these modalities or generators`,
        also: ['seeds'],
      });
    }
    // A model that is named but undefined is reported where it is named.
    if (p.backend === 'llm' && !p.model) issues.push({ param: ['backend'], message: LLM_NEEDS_MODEL, also: ['model'] });
    return issues;
  },

  // Only the llm backend calls its model: a procedural run (the CPU stand-in of an llm file) needs no endpoint.
  preflight: (p) =>
    p.backend !== 'llm' && p.model ? [{ what: 'model', model: p.model, param: ['model'], use: 'unused' }] : [],

  async keyExtras(p, ctx) {
    if (p.backend === 'llm') {
      if (!p.model || !ctx.models[p.model]) throw new ParamError(['backend'], LLM_NEEDS_MODEL);
      return {
        generator: await assetsDigest(['agents/prompts', 'seeds']),
        model: modelIdentity(ctx.models[p.model]),
        mlebench_dir: p.mlebench_dir ?? null,
        python: await ctx.python(),
      };
    }
    // Generators run in Python: the same seed gives the same bytes with the same environment.
    return { generator: await assetsDigest(['tasks/py', 'seeds']), python: await ctx.python() };
  },

  size: generateSize,
  run: lazyRun(() => import('./run.js')),
};
