// The solution bank a shaped run starts from: the verified trajectories that upstream nodes left on the tasks
// trained on (demonstrations), with their summaries.
import { SolutionBank } from '../../../agents/shaping/bank.js';
import { readTrajectories, trajectoryFiles } from '../../../agents/trajectory-files.js';
import type { Trajectory } from '../../../agents/trajectory.js';
import type { StageContext } from '../../contract.js';
import type { TaskRef } from '../../shared/tasks.js';
import { isCrashed, type Rollout } from '../batch.js';
import type { Summaries } from './summaries.js';

export async function seedBank(
  ctx: StageContext<unknown>,
  train: readonly TaskRef[],
  summaries: Summaries,
): Promise<SolutionBank> {
  const bank = new SolutionBank();
  const ids = new Set(train.map((t) => t.id));
  for (const input of ctx.inputs) {
    for (const { file } of trajectoryFiles(input.dir)) {
      // A grpo node's step files hold crashed rollouts too.
      const rows: Rollout[] = await readTrajectories(file);
      const demos = rows.filter((r): r is Trajectory => !isCrashed(r) && ids.has(r.task_id));
      bank.addVerified(demos, 'demonstration', 0, await summaries.write(demos));
    }
  }
  return bank;
}
