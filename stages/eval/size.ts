// How much work an eval node is: one episode a task, policy and repeat; with `sandbox: { gpus_per_run: }`,
// the GPUs its jails hold on their hosts, each episode's at most for its time budget.
import type { SizeContext, WorkSize } from '../contract.js';
import { policyGpus } from '../shared/gpus.js';
import { counted, exactly, product, tasksRead } from '../shared/size.js';
import type { EvalParams } from './index.js';
import { episodeLimits } from './limits.js';

export function evalSize(p: EvalParams, ctx: SizeContext): WorkSize {
  const tasks = tasksRead(p, ctx);
  const policies = p.policies ?? (p.policy ? [p.policy] : []);
  const np = exactly(Math.max(1, policies.length));
  const repeats = exactly(p.repeats);
  const episodes = product(tasks, np, repeats);
  const of = `${counted(tasks, 'task')} × ${counted(np, 'policy', 'policies')} × ${counted(repeats, 'repeat')}`;
  const served = policyGpus(policies, ctx.models);
  const perRun = ctx.sandboxGpusPerRun ?? 0;
  const gpus = served === undefined ? undefined : p.concurrency * perRun;
  const budget = p.time_budget ?? episodeLimits(p).time_budget;
  const hours = perRun && episodes ? { n: (episodes.n * perRun * budget) / 3600, atMost: true } : undefined;
  return {
    work: [{ n: episodes, unit: 'episodes', of }],
    ...(gpus === undefined ? {} : { gpus }),
    ...(hours ? { gpuHours: { n: hours, unit: 'GPU-hours', of: `jails at their ${budget} s budget` } } : {}),
    gives: { trajectories: episodes },
  };
}
