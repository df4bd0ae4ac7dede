// The guide stage's run(): one guidance record per task, written by the
// configured model (its answers kept in the LLM response cache) or by the
// procedural writer, each checked before it is stored.
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { guidanceProblems, readTaskFacts, type GuidanceRecord } from '../../agents/guidance/index.js';
import { askGuidance } from '../../agents/guidance/llm.js';
import { proceduralGuidance } from '../../agents/guidance/procedural.js';
import { LlmClient } from '../../agents/llm/client.js';
import { StageFailure, UserError } from '../../core/errors.js';
import { mapLimit } from '../../core/pool.js';
import type { StageContext, StageResult } from '../contract.js';
import { listTasks } from '../shared/tasks.js';
import type { GuideParams } from './index.js';

export async function run(ctx: StageContext<GuideParams>): Promise<StageResult> {
  const p = ctx.params;
  const tasks = await listTasks({ split: 'all', limit: p.limit, inputs: ctx.inputs, experimentDir: ctx.experimentDir });
  if (!tasks.length) throw new UserError('no tasks in the inputs to write guidance for');
  if (!p.model) {
    // The procedural writer reads the task's fault record; tasks from elsewhere have none.
    const bare = tasks.filter((t) => !existsSync(join(t.dir, 'private', 'fault.json'))).map((t) => t.id);
    if (bare.length)
      throw new UserError(
        `${bare.length} task(s) have no private/fault.json for the procedural writer (${bare.slice(0, 3).join(', ')}): give model: to have a model write their guidance`,
      );
  }
  const client = p.model
    ? new LlmClient({ name: p.model, spec: ctx.models[p.model], cacheDir: join(ctx.cacheRoot, 'llm'), log: ctx.log })
    : undefined;
  await mkdir(join(ctx.outDir, 'guidance'));
  let done = 0;
  let tries = 0;
  const failed: string[] = [];
  const records = await mapLimit(
    tasks,
    p.concurrency,
    async (t): Promise<GuidanceRecord | undefined> => {
      const facts = readTaskFacts(t.dir, t.id);
      let record: GuidanceRecord | undefined;
      if (client) {
        const r = await askGuidance(client, facts, { attempts: p.attempts, signal: ctx.signal });
        if (r.ok) {
          tries += r.attempts;
          record = { task_id: t.id, source: p.model!, ...r.value };
        } else {
          tries += p.attempts;
          failed.push(t.id);
          ctx.log(`${t.id}: no usable guidance after ${p.attempts} tries: ${r.errors[r.errors.length - 1]}`);
        }
      } else {
        const g = proceduralGuidance(facts);
        const problems = guidanceProblems(g);
        if (problems.length)
          throw new StageFailure(`the procedural guidance for ${t.id} does not validate: ${problems.join('; ')}`);
        record = { task_id: t.id, source: 'procedural', ...g };
      }
      if (record) await writeFile(join(ctx.outDir, 'guidance', `${t.id}.json`), JSON.stringify(record, null, 1) + '\n');
      ctx.progress({ done: ++done, total: tasks.length, unit: 'tasks' });
      return record;
    },
    ctx.signal,
  );
  ctx.signal.throwIfAborted();
  const ok = records.filter((r): r is GuidanceRecord => r !== undefined);
  if (!ok.length) throw new StageFailure(`no task got usable guidance (${failed.length} failed; see the log)`);
  return {
    metrics: {
      tasks: tasks.length,
      guided: ok.length,
      failed: failed.length,
      source: p.model ?? 'procedural',
      ...(client ? { attempts: tries } : {}),
    },
  };
}
