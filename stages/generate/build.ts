// One task of a generate node, built into its item folder: procedurally (the Data Strategist's spec, then the
// factory, a few attempts) or through the LLM factory roles. The outcome, built or dropped at a stage, is the
// item's result.json.
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { buildLlmTask } from '../../agents/factory/build.js';
import type { LlmClient } from '../../agents/llm/client.js';
import type { Sandbox } from '../../sandbox/index.js';
import { seedDescription } from '../../seeds/describe.js';
import type { SeedDna } from '../../seeds/index.js';
import { draftSpec } from '../../seeds/strategist.js';
import { buildTask, type BuildResult } from '../../tasks/factory.js';
import type { StageContext } from '../contract.js';
import type { GenerateParams } from './index.js';

/** What generation.json records of one task. */
export interface ItemResult {
  index: number;
  seed_id: string;
  generator: string;
  task_id?: string;
  ok: boolean;
  stage?: string;
  error?: string;
  attempts: number;
  sample_score?: number;
}

/** What every task of the node shares. */
export interface Builder {
  ctx: StageContext<GenerateParams>;
  seeds: readonly SeedDna[];
  sandbox: Sandbox;
  /** An empty task folder the build sessions open on. */
  empty: string;
  /** The model's client, with backend: llm. */
  client?: LlmClient;
}

/** Builds task `index` into the item folder `d`. */
export function buildOne(b: Builder, index: number, d: string): Promise<ItemResult> {
  const dna = b.seeds[index % b.seeds.length];
  return b.client ? buildWithLlm(b, b.client, index, dna, d) : buildProcedural(b, index, dna, d);
}

async function buildProcedural(b: Builder, index: number, dna: SeedDna, d: string): Promise<ItemResult> {
  const { ctx } = b;
  const p = ctx.params;
  let last: BuildResult | undefined;
  let taskId = '';
  let attempt = 0;
  for (; attempt < p.attempts; attempt++) {
    const spec = draftSpec(dna, {
      seed: p.seed,
      index,
      attempt,
      samples: p.samples,
      scale: p.scale,
      fullMemoryMb: p.full_memory_mb,
      testFraction: p.test_fraction,
    });
    taskId = spec.task_id;
    const session = await b.sandbox.open({ task: b.empty, signal: ctx.signal });
    try {
      last = await buildTask(spec, join(d, 'task'), { session, python: ctx.python });
    } finally {
      await session.close();
    }
    if (last.ok) break;
    ctx.log(`task ${index} attempt ${attempt + 1}: ${last.stage}: ${last.error}`);
    await rm(join(d, 'task'), { recursive: true, force: true });
  }
  const base = {
    index,
    seed_id: dna.id,
    generator: dna.generator,
    task_id: taskId,
    attempts: Math.min(attempt + 1, p.attempts),
  };
  return last?.ok
    ? { ...base, ok: true, sample_score: last.sampleScore }
    : { ...base, ok: false, stage: last?.stage, error: last && !last.ok ? last.error : 'not built' };
}

async function buildWithLlm(b: Builder, llm: LlmClient, index: number, dna: SeedDna, d: string): Promise<ItemResult> {
  const { ctx } = b;
  const p = ctx.params;
  const session = await b.sandbox.open({ task: b.empty, signal: ctx.signal });
  try {
    const r = await buildLlmTask(dna, join(d, 'task'), {
      client: llm,
      session,
      python: ctx.python,
      seedDescription: await seedDescription(dna, p.mlebench_dir),
      samples: p.samples,
      sample: Math.floor(index / b.seeds.length) + p.seed * 1000,
      attempts: {
        strategist: p.attempts,
        developer: p.developer_attempts,
        mlops: p.evaluator_attempts,
        writer: p.attempts,
      },
      signal: ctx.signal,
    });
    const tries = Object.values(r.attempts).reduce((a, b) => a + b, 0);
    const base = { index, seed_id: dna.id, generator: 'llm', attempts: tries };
    if (r.ok) return { ...base, ok: true, task_id: r.taskId, sample_score: r.sampleScore };
    await rm(join(d, 'task'), { recursive: true, force: true });
    return {
      ...base,
      ok: false,
      stage: r.stage === 'strategist' ? 'generate' : r.stage,
      error: `${r.stage}: ${r.error}`,
    };
  } finally {
    await session.close();
  }
}
