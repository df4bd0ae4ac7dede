import { loadExperiment } from '../../pipelines/config/load.js';
import { makePlan, type Plan } from '../../pipelines/plan.js';
import type { IO } from '../io.js';

export interface PlanArgs {
  set?: string[];
  force?: boolean | string;
  only?: string;
  json?: boolean;
}

export async function planFor(file: string, args: PlanArgs, io: IO): Promise<Plan> {
  const exp = await loadExperiment(file, { overrides: args.set, env: io.env });
  return makePlan(exp, { force: args.force, only: args.only });
}

export function planJson(plan: Plan): unknown {
  return {
    experiment: plan.experiment.name,
    nodes: plan.nodes.map((p) => ({
      id: p.node.id,
      stage: p.node.stage.id,
      kind: p.node.kind,
      key: p.node.key,
      inputs: p.node.inputs,
      action: p.action,
      reason: p.reason,
    })),
  };
}

export async function planCommand(file: string, args: PlanArgs, io: IO): Promise<number> {
  const plan = await planFor(file, args, io);
  if (args.json) {
    io.out(JSON.stringify(planJson(plan), null, 2));
    return 0;
  }
  const run = plan.nodes.filter((p) => p.action === 'run').length;
  const lines = [`${plan.experiment.name}: ${plan.nodes.length} nodes, ${run} to run, ${plan.nodes.filter((p) => p.action === 'cached').length} cached`];
  const w = Math.min(40, Math.max(...plan.nodes.map((p) => p.node.id.length)));
  for (const p of plan.nodes) {
    lines.push(`  ${p.action.padEnd(6)}  ${p.node.id.padEnd(w)}  ${p.action === 'cached' ? p.node.key.slice(0, 12) : p.reason}`);
  }
  // One write: a line at a time is a system call per node.
  io.out(lines.join('\n'));
  return 0;
}
