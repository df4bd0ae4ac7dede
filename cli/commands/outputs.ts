import { ExitError, UserError } from '../../core/errors.js';
import { displayPath } from '../../pipelines/config/load.js';
import { damageReason } from '../../pipelines/cache/verify.js';
import { selectNodes } from '../../pipelines/plan.js';
import type { IO } from '../io.js';
import { planFor, type PlanArgs } from './plan.js';

/** Prints the cache folder holding NODE's outputs. */
export async function outputsCommand(file: string, node: string, args: PlanArgs, io: IO): Promise<number> {
  const plan = await planFor(file, args, io);
  const ids = [...selectNodes(plan.graph, node, 'outputs')];
  if (ids.length > 1) throw new UserError(`${node} has ${ids.length} variants; name one: ${ids.join(', ')}`);
  const n = plan.graph.nodes.get(ids[0])!;
  const found = await plan.store.check(n.key);
  if (found.state === 'damaged')
    throw new ExitError(
      1,
      `${n.id}: cache entry ${damageReason(found.problems)} (mlepipe run ${displayPath(file)} --only ${n.id} rebuilds it)`,
    );
  if (found.state === 'absent') {
    throw new ExitError(
      1,
      `${n.id} has not run with its current parameters (mlepipe run ${displayPath(file)} --only ${n.id})`,
    );
  }
  io.out(plan.store.entryDir(n.key));
  return 0;
}
