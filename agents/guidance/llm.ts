// Guidance written by a model: the task's spec, starter, configured condition
// and reference fix go in (the writer sees what the agent will not), a JSON
// object in Table 9's structure comes out, checked against the schema and the
// tool registry. An answer that fails goes back with its problems, up to
// `attempts` tries.
import type { LlmClient, ChatMessage } from '../llm/client.js';
import { extractJson, renderPrompt } from '../factory/answers.js';
import { listTools } from '../../tools/index.js';
import { guidanceProblems, type Guidance, type TaskFacts } from './index.js';

// The suite's domain names, as the tool registry spells them.
const TOOL_DOMAIN: Record<string, string> = {
  cv: 'vision',
  vision: 'vision',
  nlp: 'nlp',
  tabular: 'tabular',
  time_series: 'time-series',
  graph: 'graph',
};

export function writerPrompt(f: TaskFacts): string {
  const tools = [...listTools('shared'), ...(TOOL_DOMAIN[f.domain] ? listTools(TOOL_DOMAIN[f.domain]) : [])];
  const fix = f.fix.length
    ? f.fix.map((x) => `- replace ${JSON.stringify(x.find)} with ${JSON.stringify(x.replace)}`).join('\n')
    : '(none: the starter is the healthy configuration)';
  return renderPrompt('guide/writer', {
    task_id: f.id,
    domain: f.domain,
    template: f.template,
    metric: f.metric,
    direction: f.lowerIsBetter ? 'lower' : 'higher',
    baseline: f.baseline ? `${f.baseline.mean} ± ${f.baseline.std} over ${f.baseline.runs} seeds` : 'not recorded',
    config: f.config,
    description: f.description.trim(),
    starter: f.starter.trim(),
    fix,
    files: f.files.join(', '),
    tools: tools
      .map(
        (t) =>
          `- ${t.name}: ${t.returns}; arguments ${Object.keys(t.args.properties).join(', ')}${t.args.required.length ? ` (required: ${t.args.required.join(', ')})` : ''}`,
      )
      .join('\n'),
  });
}

export async function askGuidance(
  client: LlmClient,
  f: TaskFacts,
  opts: { attempts: number; signal?: AbortSignal },
): Promise<{ ok: true; value: Guidance; attempts: number } | { ok: false; errors: string[] }> {
  const messages: ChatMessage[] = [{ role: 'user', content: writerPrompt(f) }];
  const errors: string[] = [];
  for (let attempt = 1; attempt <= opts.attempts; attempt++) {
    const answer = await client.chat({ messages }, opts.signal);
    const parsed = extractJson(answer.content);
    const problems = parsed.ok ? guidanceProblems(parsed.value) : [parsed.error];
    if (!problems.length)
      return { ok: true, value: parsed.ok ? (parsed.value as Guidance) : (undefined as never), attempts: attempt };
    errors.push(problems.join('; '));
    messages.push(
      { role: 'assistant', content: answer.content },
      {
        role: 'user',
        content: `Your answer cannot be used:\n${problems.map((p) => `- ${p}`).join('\n')}\nAnswer again with the corrected JSON object only.`,
      },
    );
  }
  return { ok: false, errors };
}
