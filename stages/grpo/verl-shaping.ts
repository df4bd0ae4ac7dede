// SPICE and TIPS on verl: what the export carries for the sandbox service (its
// settings and the bank the demonstrations upstream start it with), and the
// per-step shaping metrics read back from what the agent loop recorded there.
// A summarizer there is an endpoint the service asks (index.ts refuses a worker entry).
import type { ShapingConfig } from '../../gpu/verl/service-shaping.js';
import type { BankEntry } from '../../agents/shaping/bank.js';
import type { TurnScore } from '../../agents/shaping/types.js';
import type { StageContext } from '../contract.js';
import type { TaskRef } from '../shared/tasks.js';
import type { GrpoParams } from './index.js';
import { DEFAULT_KAPPA } from '../../agents/shaping/returns.js';
import { seedBank } from './shaping/bank.js';
import { shapingMetrics } from './shaping/metrics.js';
import { openSummaries } from './shaping/summaries.js';

export async function verlShaping(
  ctx: StageContext<GrpoParams>,
  p: GrpoParams,
  train: readonly TaskRef[],
): Promise<{ config: ShapingConfig; bank: BankEntry[] }> {
  const s = p.shaping;
  // The demonstrations' summaries are written here, by the summarizer when there is one (an endpoint: the check
  // refuses a provider: worker entry on verl), as the worker trainer writes them; the service writes the rest.
  const summaries = openSummaries(ctx as StageContext<unknown>, s, train);
  const bank = await seedBank(ctx as StageContext<unknown>, train, summaries).finally(() => summaries.stop());
  ctx.log(
    `solution bank for the verl job: ${bank.size()} demonstration summaries over ${new Set(bank.entries().map((e) => e.task_id)).size} tasks`,
  );
  const beta =
    s.beta !== undefined ? { beta: s.beta } : { kappa: s.kappa ?? DEFAULT_KAPPA, pilot_steps: s.pilot_steps };
  // The shuffle waits for a task's whole group; a member that crashed is waited for as long as an episode may run.
  const shuffle = s.shuffle
    ? { shuffle: true, group_size: p.group_size, group_wait_ms: (p.time_budget + 600) * 1000 }
    : {};
  const summarizer = s.summarizer ? { summarizer: { name: s.summarizer, spec: ctx.models[s.summarizer] } } : {};
  return {
    config: {
      kind: s.kind === 'tips' ? 'tips' : 'spice',
      ...beta,
      ...shuffle,
      ...summarizer,
      references: s.references,
      summaries: s.summaries,
      seed: p.seed,
    },
    bank: bank.entries(),
  };
}

/**
 * Each step's shaping metrics (as the worker trainer's curve has them), from the loop's records, with the
 * β the step was shaped by: 0 for the pilot's steps, which were scored and not shaped.
 */
export function verlShapingCurve(
  records: ReadonlyMap<number, readonly TurnScore[]>,
  beta: (step: number) => number,
): Map<number, Record<string, number | null>> {
  return new Map([...records].map(([step, scores]) => [step, shapingMetrics(scores, beta(step))]));
}
