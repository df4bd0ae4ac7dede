// The generate stage's run(): seeds picked, each task built procedurally or
// through the LLM factory roles, one item checkpoint per task.
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { linkTree } from '../../core/fs.js';
import { buildLlmTask } from '../../agents/factory/build.js';
import { LlmClient } from '../../agents/llm/client.js';
import { seedDescription } from '../../seeds/describe.js';
import { selectSeeds, type SeedDna } from '../../seeds/index.js';
import { draftSpec } from '../../seeds/strategist.js';
import { buildTask, type BuildResult } from '../../tasks/factory.js';
import { TASKGEN_MODULES } from '../../tasks/roles.js';
import type { Metrics, StageContext, StageResult } from '../contract.js';
import { stageSandbox } from '../shared/sandbox.js';
import type { GenerateParams } from './index.js';

interface ItemResult {
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

export async function run(ctx: StageContext<GenerateParams>): Promise<StageResult | void> {
  const p = ctx.params;
  const seeds = selectSeeds(p.seeds, p.modalities);
  if (!seeds.length) throw new Error('no seed matches seeds and modalities');
  const count = p.count ?? (p.per_seed ? p.per_seed * seeds.length : 60);
  const python = ctx.python;
  // Made first: a missing API key fails before any jail is started.
  const client =
    p.backend === 'llm'
      ? new LlmClient({
          name: p.model!,
          spec: ctx.models[p.model!],
          cacheDir: join(ctx.cacheRoot, 'llm'),
          log: ctx.log,
        })
      : undefined;
  const empty = await mkdtemp(join(tmpdir(), 'mlepipe-gen-'));
  await mkdir(join(empty, 'public'));
  // Procedural tasks run only the generator; an LLM's script may import anything the agents have.
  const sandbox = stageSandbox(ctx, Math.min(p.concurrency, count), client ? undefined : TASKGEN_MODULES);
  const results: ItemResult[] = [];
  let done = 0;
  const queue = Array.from({ length: count }, (_, i) => i);
  const worker = async () => {
    while (queue.length && !ctx.signal.aborted) {
      const index = queue.shift()!;
      const itemId = `task-${index}`;
      let dir = await ctx.items.get(itemId);
      if (!dir) {
        dir = await ctx.items.put(itemId, async (d) => {
          const r = await makeOne(index, d);
          // A build whose steps were stopped by the interrupt is not a verdict on the task: keep no item.
          if (ctx.signal.aborted) throw new Error('interrupted');
          await writeFile(join(d, 'result.json'), JSON.stringify(r, null, 2) + '\n');
        });
      }
      const r = JSON.parse(await readFile(join(dir, 'result.json'), 'utf8')) as ItemResult;
      results.push(r);
      // Linked, not copied: a finished item is as final as the node (an image task has hundreds of files).
      if (r.ok) await linkTree(join(dir, 'task'), join(ctx.outDir, 'tasks', r.task_id!));
      else ctx.log(`task ${index} (${r.seed_id}) dropped at ${r.stage}: ${r.error}`);
      ctx.progress(++done, count);
    }
  };
  const makeOne = async (index: number, d: string): Promise<ItemResult> => {
    const dna = seeds[index % seeds.length];
    if (client) return makeWithLlm(index, dna, d, client);
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
      });
      taskId = spec.task_id;
      const session = await sandbox.open({ task: empty, signal: ctx.signal });
      try {
        last = await buildTask(spec, join(d, 'task'), { session, python });
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
  };
  const makeWithLlm = async (index: number, dna: SeedDna, d: string, llm: LlmClient): Promise<ItemResult> => {
    const session = await sandbox.open({ task: empty, signal: ctx.signal });
    try {
      const r = await buildLlmTask(dna, join(d, 'task'), {
        client: llm,
        session,
        python,
        seedDescription: await seedDescription(dna, p.mlebench_dir),
        samples: p.samples,
        sample: Math.floor(index / seeds.length) + p.seed * 1000,
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
  };
  try {
    await Promise.all(Array.from({ length: p.concurrency }, worker));
  } finally {
    await sandbox.shutdown();
    await rm(empty, { recursive: true, force: true });
  }
  if (ctx.signal.aborted) throw new Error('interrupted');
  results.sort((a, b) => a.index - b.index);
  const generated = results.filter((r) => r.ok || r.stage !== 'generate').length;
  const ok = results.filter((r) => r.ok).length;
  const byGenerator: Record<string, number> = {};
  for (const r of results.filter((x) => x.ok)) byGenerator[r.generator] = (byGenerator[r.generator] ?? 0) + 1;
  await writeFile(
    join(ctx.outDir, 'generation.json'),
    JSON.stringify(
      { candidates: count, generated, evaluator_ok: ok, by_generator: byGenerator, tasks: results },
      null,
      2,
    ) + '\n',
  );
  const llm: Metrics = client
    ? {
        llm_requests: client.usage.requests,
        llm_cached: client.usage.cached,
        llm_retries: client.usage.retries,
        prompt_tokens: client.usage.prompt_tokens,
        completion_tokens: client.usage.completion_tokens,
        cost_usd: Number(client.usage.cost_usd.toFixed(4)),
      }
    : {};
  return {
    metrics: {
      candidates: count,
      generated,
      evaluator_ok: ok,
      tasks: ok,
      attempts: results.reduce((s, r) => s + r.attempts, 0),
      ...llm,
    },
  };
}
