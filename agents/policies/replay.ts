// A branch of a saved trajectory (MLToolBench's paired observation
// intervention): up to the branch turn the saved replies are given again, so
// the scaffold executes the same actions in a fresh workspace and rebuilds the
// state the trajectory reached; from the turn after it the policy itself acts.
// Calls a scaffold makes inside an action (mlab's Edit Script) still go to the
// policy, as they did when the trajectory was recorded.
import type { Policy, PolicyReply, PolicyRequest } from './types.js';
import { StageFailure } from '../../core/errors.js';

export function replaying(policy: Policy, replies: readonly string[], upTo: number): Policy {
  return {
    ...policy,
    async act(req: PolicyRequest, signal?: AbortSignal): Promise<PolicyReply> {
      if (req.purpose === 'step' && req.turn <= upTo) {
        const text = replies[req.turn];
        if (text === undefined) throw new StageFailure(`the saved trajectory has no reply at turn ${req.turn}`);
        return { text, usage: { prompt_tokens: 0, completion_tokens: 0 }, cached: true };
      }
      return policy.act(req, signal);
    },
  };
}
