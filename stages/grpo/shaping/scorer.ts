// What scores a turn's call for shaping: the policy's own trainer worker, a worker entry started for the
// node, or an OpenAI-compatible server's prompt log-probabilities.
import { join } from 'node:path';
import { LlmClient } from '../../../agents/llm/client.js';
import { promptScorer } from '../../../agents/shaping/prompt-scorer.js';
import { spanTokens, type Scorer } from '../../../agents/shaping/types.js';
import { InternalError } from '../../../core/errors.js';
import { TrainerClient } from '../../../gpu/trainer/client.js';
import type { StageContext } from '../../contract.js';
import { serveModel, type ServedModel } from '../../shared/worker.js';
import type { ShapingParams } from '../index.js';

/** Items per /score request: large enough to amortise the round trip, small enough to keep memory flat. */
const SCORE_CHUNK = 32;

/**
 * A trainer worker's /score as a Scorer, an overflowing item as null. A reply as text is tokenised by the
 * worker after its prefix; sampled ids are teacher-forced whole and the call's tokens picked by offset.
 */
export function workerScorer(client: TrainerClient, maxLength: number): Scorer {
  return {
    async score(items, signal) {
      const out: Array<number[] | null> = [];
      for (let i = 0; i < items.length; i += SCORE_CHUNK) {
        const chunk = items.slice(i, i + SCORE_CHUNK);
        const part = chunk.map((it) =>
          it.sampled
            ? { messages: it.messages, token_ids: it.sampled }
            : { messages: it.messages, reply: it.reply, ...(it.prefix ? { prefix: it.prefix } : {}) },
        );
        const res = await client.score(
          part,
          { max_length: maxLength, offsets: chunk.some((it) => it.sampled) },
          signal,
        );
        res.forEach((r, j) => {
          const it = chunk[j];
          if (r.overflow) return void out.push(null);
          if (!it.sampled || !r.offsets) return void out.push(r.logprobs);
          const from = (it.prefix ?? '').length;
          const [a, b] = spanTokens(r.offsets, from, from + it.reply.length);
          out.push(b > a ? r.logprobs.slice(a, b) : null);
        });
      }
      return out;
    },
  };
}

export interface OpenScorer {
  scorer: Scorer;
  stop(): Promise<void>;
}

/**
 * `scorer: worker` scores on the policy's worker (its weights before the step's update: π_old); a
 * provider: worker entry gets its own worker; an openai entry is asked for prompt log-probabilities on its
 * completions endpoint (or, with `scorer_api: score`, is a running trainer worker reached through /score).
 */
export async function openScorer(
  ctx: StageContext<unknown>,
  s: ShapingParams,
  policyWorker?: TrainerClient,
): Promise<OpenScorer> {
  if (s.scorer === 'worker') {
    // The stage's checks allow `scorer: worker` only with `trainer: worker`.
    if (!policyWorker) throw new InternalError('scorer: worker needs the policy on a trainer worker');
    return { scorer: workerScorer(policyWorker, s.max_length), stop: async () => {} };
  }
  const spec = ctx.models[s.scorer];
  if (spec.provider === 'openai' && (s.scorer_api ?? 'completions') === 'completions') {
    const client = new LlmClient({ name: s.scorer, spec, log: ctx.log });
    return {
      scorer: promptScorer(client, { template: s.template ?? 'chatml', maxLength: s.max_length }),
      stop: async () => {},
    };
  }
  const served: ServedModel = await serveModel(ctx, s.scorer, { ckptDir: join(ctx.items.root, 'scorer-checkpoints') });
  const client = served.trainer ?? new TrainerClient((served.spec.base_url ?? '').replace(/\/v1\/?$/, ''));
  return { scorer: workerScorer(client, s.max_length), stop: () => served.stop() };
}
