// Solution summaries written by a model: the task's description and a
// verified trajectory's actions (its code, tool calls and file actions, never
// its observations, score or grade) go in, one paragraph on how it solved the
// task comes out. An empty or failed answer leaves the procedural summary in
// its place, with the reason.
import { renderPrompt } from '../factory/answers.js';
import type { LlmClient } from '../llm/client.js';
import type { Trajectory } from '../trajectory.js';
import { summarise, type WrittenSummary } from './bank.js';

const CODE_CHARS = 4000;
const ACTIONS_CHARS = 24_000;
const clip = (s: string, n: number) => (s.length > n ? `${s.slice(0, n)}\n… (${s.length - n} more characters)` : s);

/** The trajectory's actions as the summarizer reads them: what the agent did, not what it was told back. */
export function actionsText(t: Pick<Trajectory, 'turns'>): string {
  const lines = t.turns.flatMap((turn, i) => {
    const n = `${i + 1}.`;
    if (turn.action === 'code' && turn.code)
      return [
        `${n} ran Python${turn.exit_code === 0 ? '' : ' (it failed)'}:\n\`\`\`python\n${clip(turn.code.trim(), CODE_CHARS)}\n\`\`\``,
      ];
    if (turn.action === 'tool')
      return [`${n} called the diagnostic tool ${turn.name}${turn.args ? ` with ${JSON.stringify(turn.args)}` : ''}`];
    if (turn.action === 'action')
      return [
        `${n} used the action ${turn.name}${turn.args ? ` with ${clip(JSON.stringify(turn.args), CODE_CHARS)}` : ''}`,
      ];
    if (turn.action === 'validate') return [`${n} checked the submission's format`];
    if (turn.action === 'answer') return [`${n} declared the task done`];
    return [];
  });
  return clip(lines.join('\n') || '(no actions recorded)', ACTIONS_CHARS);
}

export function summaryPrompt(t: Pick<Trajectory, 'task_id' | 'turns'>, description: string): string {
  return renderPrompt('shaping/summarize', {
    task_id: t.task_id,
    description: description.trim() || '(none)',
    actions: actionsText(t),
  });
}

/** A reasoning model's thinking is not part of its answer. */
const answerOf = (content: string) => content.replace(/<think>[\s\S]*?(<\/think>|$)/g, '').trim();

/** The model's paragraph, or the procedural summary and why the model's could not be used. */
export async function modelSummary(
  client: LlmClient,
  writer: string,
  t: Trajectory,
  description: string,
  signal?: AbortSignal,
): Promise<WrittenSummary> {
  const procedural = (why: string): WrittenSummary => ({
    text: summarise(t),
    writer: 'procedural',
    fallback: `${writer}: ${why}`,
  });
  try {
    const r = await client.chat(
      { messages: [{ role: 'user', content: summaryPrompt(t, description) }], temperature: 0 },
      signal,
    );
    const text = answerOf(r.content);
    return text ? { text, writer } : procedural('empty answer');
  } catch (err) {
    if (signal?.aborted) throw err;
    return procedural((err as Error).message);
  }
}
