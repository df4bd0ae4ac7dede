// What every scaffold does around a policy call: stop when interrupted or
// out of time, count tokens, and tell an agent's failure (recorded, the
// episode ends) from an unreachable endpoint (the node stops).
import { EnvError } from '../../core/errors.js';
import type { ReplyTokens } from '../llm/client.js';
import type { PolicyChoice, PolicyRequest } from '../policies/types.js';
import type { EpisodeContext, EpisodeResult } from './types.js';

export const newUsage = (): EpisodeResult['usage'] => ({
  prompt_tokens: 0,
  completion_tokens: 0,
  requests: 0,
  cached: 0,
});

/** Why the episode must stop before its next turn, or the milliseconds left in its budget. */
export function budget(
  ctx: EpisodeContext,
  started: number,
  minStepMs = 1000,
): { stop: EpisodeResult['ended'] } | { left: number } {
  if (ctx.signal.aborted) return { stop: 'interrupted' };
  const left = ctx.limits.timeBudgetMs - (Date.now() - started);
  return left < minStepMs ? { stop: 'time_budget' } : { left };
}

export async function ask(
  ctx: EpisodeContext,
  req: PolicyRequest,
  usage: EpisodeResult['usage'],
): Promise<
  | { text: string; choice?: PolicyChoice; logprobs?: number[]; tokens?: ReplyTokens }
  | { stop: EpisodeResult['ended']; error: string }
> {
  try {
    const reply = await ctx.policy.act({ ...req, task: ctx.task.meta }, ctx.signal);
    usage.prompt_tokens += reply.usage.prompt_tokens;
    usage.completion_tokens += reply.usage.completion_tokens;
    usage.requests++;
    if (reply.cached) usage.cached++;
    return { text: reply.text, choice: reply.choice, logprobs: reply.logprobs, tokens: reply.tokens };
  } catch (err) {
    // An endpoint that cannot be reached is the environment's problem, not the agent's.
    if (err instanceof EnvError) throw err;
    return { stop: ctx.signal.aborted ? 'interrupted' : 'policy_error', error: (err as Error).message };
  }
}
