// The pilot (App. D.2) that calibrates β when the experiment does not write it: `pilot_steps` batches of
// rollouts with the initial policy on training tasks, scored against the starting bank by the initial snapshot;
// β = κ / (m̂ + ε). Not trained on. Its rollouts and calibration are an item of their own, so a rerun reuses them.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { SolutionBank } from '../../../agents/shaping/bank.js';
import { calibrateBeta, DEFAULT_KAPPA, type Calibration } from '../../../agents/shaping/returns.js';
import type { Scorer } from '../../../agents/shaping/types.js';
import { StageFailure } from '../../../core/errors.js';
import { formatJsonl, readJson } from '../../../core/json-files.js';
import type { StageContext } from '../../contract.js';
import type { Rollout } from '../batch.js';
import type { ShapingParams } from '../index.js';
import { scoreRollouts, type ScoredRollouts } from './score.js';

export async function pilotBeta(
  ctx: StageContext<unknown>,
  s: ShapingParams,
  o: { bank: SolutionBank; scorer: () => Promise<Scorer>; rollouts: (j: number) => Promise<Rollout[]> },
): Promise<Calibration> {
  let dir = await ctx.items.get('pilot');
  if (!dir) {
    const scorer = await o.scorer();
    dir = await ctx.items.put('pilot', async (d) => {
      const rollouts: Rollout[] = [];
      for (let j = 1; j <= s.pilot_steps; j++) rollouts.push(...(await o.rollouts(j)));
      const scored = await scoreRollouts(rollouts, o.bank, s, scorer, 'pilot', ctx.signal);
      const ds = [...scored.scores.values()].flat().flatMap((t) => (t.d === null ? [] : [t.d]));
      const cal = calibrateBeta(ds, s.kappa ?? DEFAULT_KAPPA);
      if (!cal) throw nothingScored(rollouts.length, scored, o.bank);
      await writeFile(join(d, 'pilot.jsonl'), formatJsonl(rollouts));
      await writeFile(join(d, 'calibration.json'), JSON.stringify(cal, null, 1) + '\n');
    });
  }
  const cal = await readJson<Calibration>(join(dir, 'calibration.json'));
  await writeFile(join(ctx.outDir, 'calibration.json'), JSON.stringify(cal, null, 1) + '\n');
  ctx.log(
    `shaping pilot: ${cal.turns} scored calls, mean |d| ${cal.m_hat.toPrecision(4)}, beta ${cal.beta.toPrecision(4)}: mean |beta·d| ${cal.mean_abs_shaping.toFixed(4)} in [${cal.range.join(', ')}]`,
  );
  return cal;
}

/** Says why none was scored: no call parsed at all points at the policy, unscored calls at the bank or the length. */
function nothingScored(rollouts: number, scored: ScoredRollouts, bank: SolutionBank): StageFailure {
  const calls = [...scored.scores.values()].flat();
  const why = (r: string) => calls.filter((t) => t.reason === r).length;
  return new StageFailure(
    `the pilot's ${rollouts} rollouts had no scored tool call (${calls.length} calls parsed, ${why('no-reference')} on tasks without a reference, ` +
      `${why('overflow')} over max_length; ${bank.size()} summaries in the solution bank): ` +
      'nothing to calibrate beta on; give shaping.beta, or demonstrations with verified solutions in needs:',
  );
}
