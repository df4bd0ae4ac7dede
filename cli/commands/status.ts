import type { IO } from '../io.js';
import { planFor, type PlanArgs } from './plan.js';

/** Exit 1 when anything would run. */
export async function statusCommand(file: string, args: PlanArgs, io: IO): Promise<number> {
  const plan = await planFor(file, args, io);
  // A node to rescore is stale too: its entry is still to be written, only more cheaply.
  const stale = plan.nodes.filter((p) => p.action === 'run' || p.action === 'rescore');
  if (!stale.length) {
    io.out(`${plan.experiment.name}: up to date (${plan.nodes.length} nodes cached)`);
    return 0;
  }
  io.out(`${plan.experiment.name}: ${stale.length} of ${plan.nodes.length} nodes stale`);
  for (const p of stale) io.out(`  ${p.node.id}: ${p.reason}`);
  return 1;
}
