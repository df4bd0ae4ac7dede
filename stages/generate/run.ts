// The generate stage's run(): seeds picked, each task built procedurally or
// through the LLM factory roles (build.ts), one item checkpoint per task.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LlmClient } from '../../agents/llm/client.js';
import { ParamError } from '../../core/errors.js';
import { linkTree } from '../../core/fs.js';
import { isObject, readJson } from '../../core/json-files.js';
import { selectSeeds } from '../../seeds/index.js';
import { TASKGEN_MODULES } from '../../tasks/roles.js';
import type { Metrics, StageContext, StageResult } from '../contract.js';
import { announceKept } from '../shared/resume.js';
import { stageSandbox } from '../shared/sandbox.js';
import { buildOne, type Builder, type ItemResult } from './build.js';
import type { GenerateParams } from './index.js';

const taskItemId = (index: number) => `task-${index}`;

/** Task after task from a shared queue, each built once into its item (or read back) and linked into tasks/. */
async function buildQueue(b: Builder, queue: number[], results: ItemResult[], tick: () => void): Promise<void> {
  const { ctx } = b;
  while (queue.length && !ctx.signal.aborted) {
    const index = queue.shift()!;
    const itemId = taskItemId(index);
    const dir =
      (await ctx.items.get(itemId)) ??
      (await ctx.items.put(itemId, async (d) => {
        const r = await buildOne(b, index, d);
        // A build whose steps were stopped by the interrupt is not a verdict on the task: keep no item.
        ctx.signal.throwIfAborted();
        await writeFile(join(d, 'result.json'), JSON.stringify(r, null, 2) + '\n');
      }));
    const r = await readJson<ItemResult>(join(dir, 'result.json'), isObject);
    results.push(r);
    // Linked, not copied: a finished item is as final as the node (an image task has hundreds of files).
    if (r.ok) await linkTree(join(dir, 'task'), join(ctx.outDir, 'tasks', r.task_id!));
    else ctx.log(`task ${index} (${r.seed_id}) dropped at ${r.stage}: ${r.error}`);
    tick();
  }
}

/** The model's usage, with backend: llm. */
const llmMetrics = (client: LlmClient | undefined): Metrics =>
  client
    ? {
        llm_requests: client.usage.requests,
        llm_cached: client.usage.cached,
        llm_retries: client.usage.retries,
        prompt_tokens: client.usage.prompt_tokens,
        completion_tokens: client.usage.completion_tokens,
        cost_usd: Number(client.usage.cost_usd.toFixed(4)),
      }
    : {};

export async function run(ctx: StageContext<GenerateParams>): Promise<StageResult | void> {
  const p = ctx.params;
  const seeds = selectSeeds(p.seeds, p.modalities);
  if (!seeds.length) throw new ParamError(['seeds'], 'no seed matches seeds and modalities');
  const count = p.count ?? (p.per_seed ? p.per_seed * seeds.length : 60);
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
  const queue = Array.from({ length: count }, (_, i) => i);
  await announceKept(ctx, queue.map(taskItemId), 'tasks');
  let done = 0;
  const tick = () => ctx.progress({ done: ++done, total: count, unit: 'tasks' });
  try {
    const b: Builder = { ctx, seeds, sandbox, empty, client };
    await Promise.all(Array.from({ length: p.concurrency }, () => buildQueue(b, queue, results, tick)));
  } finally {
    await sandbox.shutdown();
    await rm(empty, { recursive: true, force: true });
  }
  ctx.signal.throwIfAborted();
  results.sort((a, b) => a.index - b.index);
  const generated = results.filter((r) => r.ok || r.stage !== 'generate').length;
  const ok = results.filter((r) => r.ok).length;
  const byGenerator: Record<string, number> = {};
  for (const r of results.filter((x) => x.ok)) byGenerator[r.generator] = (byGenerator[r.generator] ?? 0) + 1;
  const funnel = { candidates: count, generated, evaluator_ok: ok, by_generator: byGenerator, tasks: results };
  await writeFile(join(ctx.outDir, 'generation.json'), JSON.stringify(funnel, null, 2) + '\n');
  const attempts = results.reduce((s, r) => s + r.attempts, 0);
  return {
    metrics: { candidates: count, generated, evaluator_ok: ok, tasks: ok, attempts, ...llmMetrics(client) },
  };
}
