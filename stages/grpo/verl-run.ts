// `trainer: verl`: the verl export, kept in the node's item store (stable
// across attempts, unlike the staging folder), run as a Ray job with the
// sandbox service serving its agent loop and reward function for the job's
// lifetime. The job's checkpoints and verl's metrics come back into the node's
// output; the metrics in the local trainer's metrics.jsonl shape.
import { cp, readFile, writeFile } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { readJsonFile } from '../../core/text.js';
import { writeVerlExport, type ExportOptions, type ExportTask } from '../../gpu/verl/export.js';
import { localPython, runJob, startLocalHead, type JobRecord } from '../../gpu/verl/job.js';
import { verlCurve } from '../../gpu/verl/metrics.js';
import { startSandboxService } from '../../gpu/verl/service.js';
import type { StageContext, StageResult } from '../contract.js';
import { starterScore } from '../eval/tasks.js';
import { stageSandbox } from '../sandbox.js';
import type { GrpoParams } from './index.js';

export async function runVerl(ctx: StageContext<GrpoParams>, train: readonly ExportTask[], val: readonly ExportTask[], o: ExportOptions): Promise<StageResult> {
  const p = ctx.params;
  const exportDir = (await ctx.items.get('verl-export')) ?? (await ctx.items.put('verl-export', async (d) => void (await writeVerlExport(d, train, val, o))));
  const resultsDir = (await ctx.items.get('verl-results')) ?? (await ctx.items.put('verl-results', async () => {}));
  const overrides = ((await import('yaml')).parse(await readFile(join(exportDir, 'trainer_overrides.yaml'), 'utf8')) as { overrides: string[] }).overrides;
  // A head started for the run goes with it: a rerun starts another, and submits to it afresh.
  const cluster = p.verl.ray_address ?? ctx.ray?.address;
  // Every core: verl's TransferQueue and GPU workers hold a dozen CPUs on one GPU, and wait forever without them.
  const head = cluster ? undefined : await startLocalHead({ cpus: availableParallelism(), log: ctx.log });
  const sandbox = stageSandbox(ctx, Math.min(p.concurrency, p.batch_size * p.group_size));
  let service: Awaited<ReturnType<typeof startSandboxService>> | undefined;
  let job: { id: string };
  const token = randomBytes(24).toString('hex');
  try {
    const address = cluster ?? head!.address;
    // The job is recorded per cluster: the item store keeps the first record of an id.
    const jobId = `ray-job ${address}`;
    const jobItem = await ctx.items.get(jobId);
    const recorded = jobItem ? ((await readJsonFile(join(jobItem, 'job.json'))) as JobRecord) : undefined;
    // A token per run: sandbox_host may be an address the whole cluster reaches.
    service = await startSandboxService({ sandbox, tasksDir: join(exportDir, 'tasks'), reward: o.reward, inputs: o.inputs, python: ctx.python, memoryMb: p.memory_mb, starter: starterScore, host: p.verl.sandbox_host, token, log: ctx.log });
    ctx.log(`sandbox service for the job at ${service.url}`);
    job = await runJob({
      exportDir,
      resultsDir,
      address,
      overrides,
      // A head started here runs Ray from .venv/verl; its workers' Python is that one, which has verl.
      python: p.verl.python ?? (head ? localPython() : 'python3'),
      sandboxUrl: service.url,
      sandboxToken: token,
      recorded,
      record: async (j) => void (await ctx.items.put(jobId, (d) => writeFile(join(d, 'job.json'), JSON.stringify(j) + '\n'))),
      log: ctx.log,
      signal: ctx.signal,
    });
  } finally {
    await service?.close();
    await sandbox.shutdown();
    await head?.stop();
  }
  await cp(exportDir, join(ctx.outDir, 'verl'), { recursive: true });
  if (existsSync(join(resultsDir, 'checkpoints'))) await cp(join(resultsDir, 'checkpoints'), join(ctx.outDir, 'checkpoint'), { recursive: true });
  const raw = existsSync(join(resultsDir, 'metrics.jsonl')) ? await readFile(join(resultsDir, 'metrics.jsonl'), 'utf8') : '';
  const curve = verlCurve(raw);
  await writeFile(join(ctx.outDir, 'metrics.jsonl'), curve.map((m) => JSON.stringify(m)).join('\n') + (curve.length ? '\n' : ''));
  await writeFile(join(ctx.outDir, 'rows.json'), JSON.stringify({ curve }, null, 1) + '\n');
  await writeFile(join(ctx.outDir, 'job.json'), JSON.stringify(job) + '\n');
  const last = curve[curve.length - 1];
  return { metrics: { steps: curve.length, reward_first: curve[0]?.reward_mean ?? null, reward_last: last?.reward_mean ?? null, valid_last: last?.valid_rate ?? null, entropy_last: last?.entropy ?? null } };
}
