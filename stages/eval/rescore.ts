// An eval rebuilt from another entry's recorded runs when only what is read
// after the episodes changed (the reward, its inputs): every trajectory is
// scored again (stages/shared/score.ts) and the outputs are written as a run writes them (outputs.ts).
// No episode runs, no sandbox opens and no model is asked.
import { cp } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { readTrajectories, TRAJECTORIES_FILE } from '../../agents/trajectory-files.js';
import type { Trajectory } from '../../agents/trajectory.js';
import { rewardFormula, rewardInputs } from '../../core/rewards/presets.js';
import type { Metrics, RescoreSource, StageContext, StageResult } from '../contract.js';
import type { EvalParams } from './index.js';
import { policyNames } from './policy-names.js';
import { evalTasks, factsByTask } from './facts.js';
import { writeOutputs } from './outputs.js';
import { scoreEpisode } from '../shared/score.js';

/** What the episodes themselves measured: the source's figures hold for the same runs. */
const EPISODE_METRICS = [
  'llm_requests',
  'llm_cached',
  'prompt_tokens',
  'completion_tokens',
  'branched',
  'replay_mismatches',
];

export async function rescore(ctx: StageContext<EvalParams>, from: RescoreSource): Promise<StageResult> {
  const p = ctx.params;
  const reward = p.reward ? rewardFormula(p.reward, ctx.rewards) : undefined;
  const inputs = rewardInputs(p.reward, ctx.rewards, p);
  const recorded = await readTrajectories(join(from.dir, TRAJECTORIES_FILE));
  const trajectories = recorded.map((t): Trajectory => {
    const { rewarded: _previous, ...rest } = t;
    return { ...rest, ...scoreEpisode(t, t.evaluation, t.starter_score, inputs, reward) };
  });
  if (existsSync(join(from.dir, 'submissions')))
    await cp(join(from.dir, 'submissions'), join(ctx.outDir, 'submissions'), { recursive: true });
  const tasks = await evalTasks(ctx);
  const names = policyNames(p, ctx.models).map((n) => n.name);
  const metrics: Metrics = await writeOutputs(ctx.outDir, trajectories, names, p, [], await factsByTask(tasks));
  for (const k of EPISODE_METRICS) if (from.metrics[k] !== undefined) metrics[k] = from.metrics[k];
  ctx.log(`rescored ${trajectories.length} recorded runs of ${from.key.slice(0, 12)}; no episode ran`);
  ctx.progress({ done: trajectories.length, total: trajectories.length, unit: 'episodes rescored' });
  return { metrics: { ...metrics, rescored_runs: trajectories.length } };
}
