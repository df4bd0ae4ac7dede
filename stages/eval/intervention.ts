// eval's `intervention:` as the mlab scaffold takes it: which tools' answers
// change and how; a paraphrase through a models: entry asks that model once per
// changed answer (cached like any policy call, so reruns read the same words).
import { makePolicy, type PolicyOptions } from '../../agents/policies/index.js';
import type { Intervention } from '../../agents/scaffolds/mlab/intervene.js';
import { paraphrasePrompt } from '../../agents/scaffolds/mlab/intervene.js';
import { EnvError } from '../../core/errors.js';
import type { ModelSpec } from '../../core/models.js';
import type { EvalParams } from './index.js';

export function interventionOf(
  p: EvalParams,
  models: Readonly<Record<string, ModelSpec>>,
  opts: PolicyOptions,
  signal: AbortSignal,
): Intervention | undefined {
  const iv = p.intervention;
  if (!iv || iv.mode === 'none') return undefined;
  const name = iv.paraphrase_model;
  if (iv.mode !== 'paraphrase' || !name) return { mode: iv.mode, tools: iv.tools ?? 'all' };
  // Rewording should not wander from call to call: the lowest temperature, the node's seed.
  const model = makePolicy(name, { kind: 'openai', model: name }, models, {
    ...opts,
    sampling: { ...opts.sampling, temperature: 0, logprobs: false },
  });
  return {
    mode: 'paraphrase',
    tools: iv.tools ?? 'all',
    async paraphrase(tool, text) {
      let reply;
      try {
        reply = await model.act(
          {
            scaffold: 'mlab',
            purpose: 'understand',
            messages: [{ role: 'user', content: paraphrasePrompt(tool, text) }],
            turn: 0,
            sample: 0,
            history: [],
          },
          signal,
        );
      } catch (err) {
        // Without the paraphrase the rollout would show the original, and the arm would be wrong.
        throw err instanceof EnvError ? err : new EnvError(`paraphrase model ${name}: ${(err as Error).message}`);
      }
      const out = reply.text.trim();
      if (!out) throw new EnvError(`paraphrase model ${name} gave an empty answer for ${tool}`);
      return out;
    },
  };
}
