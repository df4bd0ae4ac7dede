// What a shell node reports: the metrics its command wrote into metrics.json (numbers, strings, booleans or
// null), and the reward formula over those named like reward variables, when one is asked for.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { StageFailure } from '../../core/errors.js';
import { exists } from '../../core/fs.js';
import { evaluate, parseFormula, REWARD_VARIABLES } from '../../core/rewards/parse.js';
import { rewardFormula } from '../../core/rewards/presets.js';
import type { Metrics, StageContext, StageResult } from '../contract.js';
import type { ShellParams } from './index.js';

/** Metrics the command wrote into its output folder, with the reward when one is asked for. */
export async function finish(ctx: StageContext<ShellParams>): Promise<StageResult> {
  const metrics = (await readMetrics(join(ctx.outDir, 'metrics.json'))) ?? {};
  if (ctx.params.reward) metrics.reward = rewardOf(rewardFormula(ctx.params.reward, ctx.rewards)!, metrics);
  return { metrics };
}

/** Evaluates a reward formula over the numeric (or boolean) metrics named like reward variables. */
function rewardOf(formula: string, metrics: Metrics): number {
  const vars: Record<string, number> = {};
  for (const v of REWARD_VARIABLES) {
    const x = metrics[v];
    if (typeof x === 'number') vars[v] = x;
    else if (typeof x === 'boolean') vars[v] = x ? 1 : 0;
  }
  return evaluate(parseFormula(formula), vars);
}

async function readMetrics(file: string): Promise<Metrics | undefined> {
  if (!(await exists(file))) return undefined;
  let data: unknown;
  try {
    data = JSON.parse(await readFile(file, 'utf8'));
  } catch (err) {
    throw new StageFailure(`metrics.json is not valid JSON: ${(err as Error).message}`);
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data))
    throw new StageFailure('metrics.json must hold one JSON object');
  const metrics: Metrics = {};
  for (const [k, v] of Object.entries(data)) {
    if (v !== null && !['number', 'string', 'boolean'].includes(typeof v)) {
      throw new StageFailure(`metrics.json: "${k}" must be a number, string, boolean or null`);
    }
    metrics[k] = v as Metrics[string];
  }
  return metrics;
}
