// The template policy: a small learnable policy over the solution kit's code
// actions that GRPO can train on a CPU (docs/training.md). It answers in ReAct's
// format and reports, with each reply, the action it chose, the features it
// saw and the action's log-probability, so the trainer needs nothing else.
import { Rng } from '../../../core/random.js';
import type { Policy, PolicyReply, PolicyRequest } from '../types.js';
import { ACTIONS, renderAction } from './actions.js';
import { features, FEATURE_NAMES, type TurnKind } from './features.js';
import { entropy, initCheckpoint, probabilities, sample, type TemplateCheckpoint } from './model.js';
import { UserError } from '../../../core/errors.js';

export { ACTIONS } from './actions.js';
export { FEATURE_NAMES } from './features.js';

export const freshCheckpoint = (): TemplateCheckpoint =>
  initCheckpoint(
    ACTIONS.map((a) => a.id),
    FEATURE_NAMES,
  );

/** The kind of each earlier turn, from the choices the scaffold recorded. */
function kindsOf(req: PolicyRequest): TurnKind[] {
  return req.history.map((h) => ACTIONS.find((x) => x.id === h.choice?.action)?.kind ?? 'invalid');
}

export function templatePolicy(
  name: string,
  ck: TemplateCheckpoint,
  opts: { temperature?: number; seed?: number | string; maxTurns: number },
): Policy {
  if (
    ck.format !== 'mlepipe-template-policy/1' ||
    ck.actions.join() !== ACTIONS.map((a) => a.id).join() ||
    ck.features.join() !== FEATURE_NAMES.join()
  ) {
    throw new UserError(`${name}: the checkpoint was made for another version of the template policy`);
  }
  const temperature = opts.temperature ?? 1;
  return {
    name,
    kind: 'template',
    async act(req: PolicyRequest): Promise<PolicyReply> {
      if (req.scaffold !== 'react') throw new UserError('the template policy speaks the react scaffold only');
      const kinds = kindsOf(req);
      const phi = features(req.task, req.history, kinds, req.turn, opts.maxTurns);
      const p = probabilities(ck.weights, phi, temperature);
      const rng = new Rng('template-policy', `${opts.seed ?? 0}:${req.task?.id ?? ''}:${req.sample}:${req.turn}`);
      const index = sample(p, rng);
      const solveTurns = new Set(kinds.map((k, i) => (k === 'solve' ? i : -1)).filter((i) => i >= 0));
      return {
        text: renderAction(ACTIONS[index], req.history, solveTurns, req.promptFormat, req.task?.id),
        usage: { prompt_tokens: 0, completion_tokens: 0 },
        choice: {
          action: ACTIONS[index].id,
          index,
          features: phi,
          logprob: Math.log(Math.max(p[index], 1e-300)),
          entropy: entropy(probabilities(ck.weights, phi, 1)),
        },
      };
    },
  };
}
