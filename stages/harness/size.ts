// How much work a harness node is: one run a competition, policy and repeat (competitions as the mlebench input
// will hold them, `limit` applied), and at most each run's time limit plus the grace it gets to write its
// results, in hours; a policy served by vLLM holds this machine's GPUs meanwhile, how many the plan cannot say.
import type { SizeContext, WorkSize } from '../contract.js';
import { policyGpus } from '../shared/gpus.js';
import { counted, exactly, product, tasksRead } from '../shared/size.js';
import type { HarnessParams } from './index.js';
import { graceS } from './process.js';

export function harnessSize(p: HarnessParams, ctx: SizeContext): WorkSize {
  const competitions = tasksRead({ limit: p.limit }, ctx);
  const policies = exactly(p.policies.length);
  const repeats = exactly(p.repeats);
  const runs = product(competitions, policies, repeats);
  const of = `${counted(competitions, 'competition')} × ${counted(policies, 'policy', 'policies')} × ${counted(repeats, 'repeat')}`;
  const perRunS = p.time_per_run_s + graceS(p.time_per_run_s);
  // Runs one after another at `concurrency` at a time take at most this long; `total_s` caps it.
  const wallS = runs && Math.ceil(runs.n / p.concurrency) * perRunS;
  const exact = wallS === undefined ? undefined : Math.min(wallS, p.total_s ?? Infinity) / 3600;
  // A bound rounded up is still one, and reads as a whole number of hours.
  const hours = exact === undefined || exact < 1 ? exact : Math.ceil(exact);
  return {
    work: [
      { n: runs, unit: 'runs', of },
      {
        n: hours === undefined ? undefined : { n: hours, atMost: true },
        unit: 'hours',
        of: `${p.concurrency} at a time, each at most ${perRunS} s${p.total_s === undefined ? '' : `, all in ${p.total_s} s`}`,
      },
    ],
    ...(policyGpus(p.policies, ctx.models) === 0 ? { gpus: 0 } : {}),
  };
}
