// The sft stage's run (stages/sft/index.ts has its parameters and checks):
// examples read, filtered, deduplicated and split, written as TRL's
// conversational JSONL (dataset.ts), then trained on a trainer worker epoch by
// epoch, the final weights saved into the node's checkpoint/ (worker-train.ts),
// or on verl (verl-run.ts).
import { ParamError } from '../../core/errors.js';
import type { StageContext, StageResult } from '../contract.js';
import { prepareDataset } from './dataset.js';
import { modelIssues, type SftParams } from './index.js';
import { trainOnWorker } from './worker-train.js';

export async function run(ctx: StageContext<SftParams>): Promise<StageResult> {
  const p = ctx.params;
  for (const issue of modelIssues(p, ctx.models)) throw new ParamError(issue.param, issue.message);
  const { train, val, funnel } = await prepareDataset(ctx);
  const counts = { examples: funnel.read, duplicates: funnel.duplicates };
  if (p.trainer === 'verl') {
    const r = await (await import('./verl-run.js')).runSftVerl(ctx, train, val);
    return { metrics: { ...counts, ...r.metrics } };
  }
  return { metrics: { ...counts, ...(await trainOnWorker(ctx, train, val)) } };
}
