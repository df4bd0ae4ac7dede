// The Data Strategist on an LLM: the seed description in, DNA + five
// scenarios + three mutations + a concrete spec out, as JSON checked against
// schemas/factory/data-strategist.schema.json. An answer that does not parse
// or does not validate goes back to the model with the errors.
import { validateWithSchema } from '../../core/jsonschema.js';
import schema from '../../schemas/factory/data-strategist.schema.json';
import type { ChatMessage, LlmClient } from '../llm/client.js';
import { extractJson, renderPrompt } from './answers.js';

export interface StrategistAnswer {
  dna: Record<string, unknown> & { modality: string; metric: string; is_lower_better: boolean };
  scenarios: { domain: string; scenario: string; justification: string }[];
  chosen: number;
  mutations: { name: string; params: Record<string, unknown> }[];
  spec: {
    task_name: string;
    domain_context: string;
    n_samples: number;
    target: { name: string; kind: 'classification' | 'regression'; classes?: string[] };
    metric: string;
    feature_mapping: { name: string; generation_logic: string }[];
    hidden_rule_logic: string;
    thresholds_logic: string;
  };
}

export interface RoleOutcome<T> {
  ok: boolean;
  value?: T;
  attempts: number;
  errors: string[];
}

/** Problems with an answer: schema errors as path: message, plus the sample-count range. */
export function strategistProblems(value: unknown, samples: [number, number]): string[] {
  const errs = validateWithSchema(schema, value, new Map(), []).map((d) => `${d.path ?? '(root)'}: ${d.message}`);
  if (errs.length) return errs;
  const n = (value as StrategistAnswer).spec.n_samples;
  if (n < samples[0] || n > samples[1]) return [`spec.n_samples: ${n} is outside [${samples[0]}, ${samples[1]}]`];
  const t = (value as StrategistAnswer).spec.target;
  if (t.kind === 'classification' && !t.classes?.length)
    return ['spec.target.classes: a classification target needs its classes'];
  return [];
}

export async function askStrategist(
  client: LlmClient,
  seedDescription: string,
  opts: { samples: [number, number]; attempts: number; sample?: number; signal?: AbortSignal },
): Promise<RoleOutcome<StrategistAnswer>> {
  const messages: ChatMessage[] = [
    {
      role: 'user',
      content: renderPrompt('factory/data-strategist', {
        seed_description: seedDescription,
        min_samples: opts.samples[0],
        max_samples: opts.samples[1],
      }),
    },
  ];
  const errors: string[] = [];
  for (let attempt = 1; attempt <= opts.attempts; attempt++) {
    const answer = await client.chat({ messages, sample: opts.sample }, opts.signal);
    const parsed = extractJson(answer.content);
    const problems = parsed.ok ? strategistProblems(parsed.value, opts.samples) : [parsed.error];
    if (!problems.length)
      return { ok: true, value: (parsed as { value: StrategistAnswer }).value, attempts: attempt, errors };
    errors.push(problems.join('; '));
    messages.push(
      { role: 'assistant', content: answer.content },
      {
        role: 'user',
        content: `Your answer cannot be used:\n${problems.map((p) => `- ${p}`).join('\n')}\nAnswer again with the corrected JSON object only.`,
      },
    );
  }
  return { ok: false, attempts: opts.attempts, errors };
}
