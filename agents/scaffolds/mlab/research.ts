// MLAgentBench's research-log actions: the agent appends summaries to
// research_log.log in its workspace, and two AI actions read that log back
// through a model, Reflection (on what the agent asks) and Retrieval (what
// of the log matters for its current plan).
import { appendFile, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { clip } from '../execute.js';
import type { ActionEnv, ActionOutcome } from './actions.js';

export type AskPurpose = 'edit' | 'understand' | 'reflect' | 'retrieve';

export const RESEARCH_LOG = 'research_log.log';

export const RESEARCH_ACTIONS = [
  {
    name: 'Append Summary to Research Log',
    description: `Append a summary of the previous step to the research log (${RESEARCH_LOG} in the workspace).`,
    input: { content: 'the summary to append' },
  },
  {
    name: 'Reflection',
    description: 'Have the model look over the research log and reflect on what you ask.',
    input: { things_to_reflect_on: 'what to reflect on and what to return, in detail' },
  },
  {
    name: 'Retrieval from Research Log',
    description: 'Have the model pick out of the research log what matters for the current plan.',
    input: { current_plan: 'the current research plan and status, in detail' },
  },
] as const;

const str = (v: unknown) => (typeof v === 'string' ? v : v === undefined ? '' : String(v));

async function researchLog(env: ActionEnv): Promise<string> {
  return readFile(join(env.roots.workspace, RESEARCH_LOG), 'utf8').catch(() => '');
}

export async function runResearchAction(
  name: string,
  args: Record<string, unknown>,
  env: ActionEnv,
): Promise<ActionOutcome> {
  if (name === 'Append Summary to Research Log') {
    await appendFile(join(env.roots.workspace, RESEARCH_LOG), `${str(args.content)}\n`);
    return { observation: 'Successfully appended to research log' };
  }
  const log = await researchLog(env);
  // The model reads at most what an observation could hold many times over; the head and tail stay.
  const body = clip(log || '(the research log is empty)', env.observationChars * 8);
  if (name === 'Reflection') {
    const what = str(args.things_to_reflect_on);
    const reply = await env.ask(
      'reflect',
      `The research problem:\n${env.problem}\n\nThe research log so far:\n\`\`\`\n${body}\n\`\`\`\n\nReflect on this: ${what}\nAnswer in plain paragraphs, only from what the log shows.`,
      {
        name: RESEARCH_LOG,
        content: log,
        instruction: what,
      },
    );
    return { observation: clip(`Reflection: ${reply.trim() || '(the model gave no answer)'}`, env.observationChars) };
  }
  const plan = str(args.current_plan);
  const reply = await env.ask(
    'retrieve',
    `The research problem:\n${env.problem}\n\nThe current research plan and status:\n${plan}\n\nThe research log so far:\n\`\`\`\n${body}\n\`\`\`\n\nList, concisely, everything in the log that will help the next steps.`,
    {
      name: RESEARCH_LOG,
      content: log,
      instruction: plan,
    },
  );
  return { observation: clip(reply.trim() || '(the model gave no answer)', env.observationChars) };
}
