// `select:` — which step's weights a grpo node hands on. `last` is the last step's; `best-val` the step whose
// validation pass had the highest mean reward, as the SandMLE paper picks its model. The rule that decides it is
// checked before anything runs: every validation step must keep a checkpoint, so the choice is never between a
// step that has weights and a better one that lost them.
import type { ParamIssue } from '../contract.js';
import type { CurveRow } from './curve.js';
import type { GrpoParams } from './index.js';

type SelectParams = Pick<
  GrpoParams,
  'select' | 'trainer' | 'steps' | 'eval_every' | 'checkpoint_every' | 'keep_checkpoints'
>;

/** Whether step k keeps a checkpoint: every checkpoint_every-th and the last. */
export const keptStep = (p: Pick<GrpoParams, 'steps' | 'checkpoint_every'>) => (k: number) =>
  k % p.checkpoint_every === 0 || k === p.steps;

/** The first validation step (every eval_every-th, and the last) that keeps no checkpoint. */
function unkeptValidation(p: SelectParams): number | undefined {
  const kept = keptStep(p);
  for (let k = p.eval_every; k < p.steps; k += p.eval_every) if (!kept(k)) return k;
  return undefined;
}

/** What `select: best-val` needs of the other params, each refused at `select`. */
export function selectIssues(p: SelectParams): ParamIssue[] {
  if (p.select !== 'best-val') return [];
  const issue = (message: string, also: string[]): ParamIssue[] => [{ param: ['select'], message, also }];
  if (p.eval_every <= 0)
    return issue('select: best-val picks a validated step; set eval_every (validation every k steps)', ['eval_every']);
  const k = unkeptValidation(p);
  if (k !== undefined)
    return issue(
      `select: best-val chooses among validation steps with a checkpoint, and step ${k} validates (eval_every: ${p.eval_every}) without one (checkpoint_every: ${p.checkpoint_every}): make eval_every a multiple of checkpoint_every`,
      ['eval_every', 'checkpoint_every'],
    );
  if ((p.trainer === 'verl' || p.trainer === 'verl-export') && p.keep_checkpoints > 0)
    return issue(
      `select: best-val on verl needs every saved step kept: verl's own retention (max_actor_ckpt_to_keep) would delete the best one; write keep_checkpoints: 0`,
      ['keep_checkpoints', 'trainer'],
    );
  return [];
}

/** The step a node hands on, and its mean validation reward where `select: best-val` chose it. */
export interface Selected {
  step: number;
  val_reward?: number;
}

/**
 * `best-val`: of the validation rows whose step kept a checkpoint (`kept`), the one with the highest val_reward,
 * the earlier step on a tie; undefined when there is none. A row before the first update (verl's validation at
 * step 0) holds the starting weights, not a checkpoint of this run, and never counts.
 */
export function bestValidation(curve: readonly CurveRow[], kept: (step: number) => boolean): Selected | undefined {
  let best: Selected | undefined;
  for (const row of curve) {
    const { step, val_reward: v } = row;
    if (typeof step !== 'number' || typeof v !== 'number' || step < 1 || !kept(step)) continue;
    if (!best || v > (best.val_reward as number) || (v === best.val_reward && step < best.step))
      best = { step, val_reward: v };
  }
  return best;
}

/** The metrics (and so the lock file's entry) that name the step handed on, for `select: best-val`. */
export const selectedMetrics = (s: Selected): CurveRow => ({
  selected_step: s.step,
  selected_val_reward: s.val_reward ?? null,
});
