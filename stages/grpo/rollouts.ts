// A step's rollouts: group_size trajectories per task, each in its own
// sandbox workspace, at most `concurrency` at once. A rollout that throws is
// recorded as crashed, never fatal to the run; an unreachable endpoint is.
import { mapLimit } from '../../core/pool.js';
import type { RewardInputs } from '../../core/rewards/presets.js';
import type { Policy } from '../../agents/policies/types.js';
import type { EpisodeLimits, PromptFormat, Scaffold } from '../../agents/scaffolds/types.js';
import { react } from '../../agents/scaffolds/react/index.js';
import type { ReleaseOptions } from '../../agents/scaffolds/react/release-options.js';
import { EnvError } from '../../core/errors.js';
import { Rng } from '../../core/random.js';
import type { Sandbox } from '../../sandbox/index.js';
import { rollout } from '../shared/episode.js';
import type { TaskRef } from '../shared/tasks.js';
import type { Rollout } from './batch.js';

export interface RolloutPlan {
  sandbox: Sandbox;
  policy: Policy;
  scaffold?: Scaffold;
  tasks: TaskRef[];
  group: number;
  groupPrefix: string;
  limits: EpisodeLimits;
  /** The ReAct reply format (default mlepipe's). */
  promptFormat?: PromptFormat;
  /** sandmle-release: the release's rules and texts. */
  release?: ReleaseOptions;
  memoryMb: number;
  python: string;
  seed: number;
  reward: string;
  /** What the reward reads besides its formula (default mlepipe's). */
  inputs?: RewardInputs;
  concurrency: number;
  signal: AbortSignal;
}

/** Step k's tasks: the train tasks in a fresh seeded order each epoch, batch by batch. */
export function pickBatch(tasks: readonly TaskRef[], size: number, k: number, seed: number): TaskRef[] {
  const orders = new Map<number, TaskRef[]>();
  const out: TaskRef[] = [];
  for (let i = (k - 1) * size; i < k * size; i++) {
    const epoch = Math.floor(i / tasks.length);
    if (!orders.has(epoch)) orders.set(epoch, new Rng('grpo-epoch', `${seed}:${epoch}`).shuffle([...tasks]));
    out.push(orders.get(epoch)![i % tasks.length]);
  }
  return out;
}

export async function runRollouts(plan: RolloutPlan, log: (m: string) => void): Promise<Rollout[]> {
  const jobs = plan.tasks.flatMap((task, t) =>
    Array.from({ length: plan.group }, (_, sample) => ({
      task,
      sample,
      groupId: `${plan.groupPrefix}/${t}/${task.id}`,
    })),
  );
  const out = await mapLimit(
    jobs,
    plan.concurrency,
    async ({ task, sample, groupId }): Promise<Rollout> => {
      try {
        return await rollout({
          ...plan,
          scaffold: plan.scaffold ?? react,
          task,
          sample,
          groupId,
          aide: { numDrafts: 1, debugProb: 0, maxDebugDepth: 0 },
          log,
        });
      } catch (err) {
        if (err instanceof EnvError || plan.signal.aborted) throw err;
        log(`rollout ${groupId}#${sample} crashed: ${(err as Error).message}`);
        return { crashed: true, task_id: task.id, group_id: groupId, sample, error: (err as Error).message };
      }
    },
    plan.signal,
  );
  // Aborted: the caller checks the signal before it reads them.
  return out as Rollout[];
}
