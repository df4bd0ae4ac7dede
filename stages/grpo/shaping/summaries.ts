// The solution bank's summaries: procedural, or written by `shaping.summarizer`. A model's summary of a
// trajectory is an item of the node (keyed by the trajectory's content), so a resumed node does not ask
// again; the model is opened on the first trajectory that has none.
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { isVerified, type WrittenSummary } from '../../../agents/shaping/bank.js';
import { modelSummary } from '../../../agents/shaping/summarizer.js';
import type { Trajectory } from '../../../agents/trajectory.js';
import { LlmClient } from '../../../agents/llm/client.js';
import { canonicalJson, sha256 } from '../../../core/hash.js';
import { readJson } from '../../../core/json-files.js';
import type { StageContext } from '../../contract.js';
import type { TaskRef } from '../../shared/tasks.js';
import { serveModel, type ServedModel } from '../../shared/worker.js';
import type { ShapingParams } from '../index.js';

export interface Summaries {
  /** Writes (or reads back) the summaries of the verified trajectories; the bank looks them up. */
  write(trajectories: readonly Trajectory[]): Promise<(t: Trajectory) => WrittenSummary | undefined>;
  stop(): Promise<void>;
}

export function openSummaries(ctx: StageContext<unknown>, s: ShapingParams, tasks: readonly TaskRef[]): Summaries {
  const name = s.summarizer;
  if (!name) return { write: async () => () => undefined, stop: async () => {} };
  let served: Promise<ServedModel> | undefined;
  let client: Promise<LlmClient> | undefined;
  const open = () => {
    served ??= serveModel(ctx, name, { ckptDir: join(ctx.items.root, 'summarizer-checkpoints') });
    return (client ??= served.then(
      (m) => new LlmClient({ name, spec: m.spec, cacheDir: join(ctx.cacheRoot, 'llm'), log: ctx.log }),
    ));
  };
  const description = taskDescriptions(tasks);
  const summaryOf = async (t: Trajectory): Promise<WrittenSummary> => {
    const id = `summary-${sha256(canonicalJson({ task_id: t.task_id, messages: t.messages, turns: t.turns })).slice(0, 24)}`;
    let dir = await ctx.items.get(id);
    if (!dir) {
      const w = await modelSummary(await open(), name, t, await description(t.task_id), ctx.signal);
      if (w.fallback)
        ctx.log(`summary of ${t.group_id}#${t.sample} (${t.task_id}) written procedurally: ${w.fallback}`);
      dir = await ctx.items.put(id, (d) => writeFile(join(d, 'summary.json'), JSON.stringify(w) + '\n'));
    }
    return readJson<WrittenSummary>(join(dir, 'summary.json'));
  };
  return {
    async write(trajectories) {
      // As many requests at once as the model's concurrency allows (the client queues the rest).
      const written = await Promise.all(
        trajectories.filter(isVerified).map(async (t) => [t, await summaryOf(t)] as const),
      );
      const byTrajectory = new Map<Trajectory, WrittenSummary>(written);
      return (t) => byTrajectory.get(t);
    },
    stop: async () => {
      // A worker that failed to start has nothing to stop.
      if (served) await (await served.catch(() => undefined))?.stop();
    },
  };
}

/** Each task's public description, read once (empty when the task has none). */
function taskDescriptions(tasks: readonly TaskRef[]): (id: string) => Promise<string> {
  const descriptions = new Map<string, Promise<string>>();
  return (id) => {
    let d = descriptions.get(id);
    if (!d) {
      const dir = tasks.find((t) => t.id === id)?.dir;
      d = dir ? readFile(join(dir, 'public', 'description.md'), 'utf8').catch(() => '') : Promise.resolve('');
      descriptions.set(id, d);
    }
    return d;
  };
}
