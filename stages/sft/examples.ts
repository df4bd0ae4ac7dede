// The sft stage's examples as read: conversations from upstream trajectories
// (trajectories.jsonl of an eval node, steps/step_K.jsonl of a grpo node) or
// from a chat JSONL file, with what the filters read (success, reward, a valid
// submission).
import { readFileSync } from 'node:fs';
import { readTrajectoriesSync } from '../../agents/trajectory-files.js';
import type { Trajectory } from '../../agents/trajectory.js';

export type Role = 'system' | 'user' | 'assistant';
export interface Message {
  role: Role;
  content: string;
}

export interface Example {
  messages: Message[];
  /** Where it came from, for messages and logs: `FILE:LINE`. */
  source: string;
  /** Trajectories of one task stay on the same side of the split. */
  group: string;
  success?: boolean;
  reward?: number | null;
  valid?: boolean;
  /** Which example of a near-duplicate cluster is kept: the highest (improvement, else reward). */
  rank: number;
}

const ROLES: readonly string[] = ['system', 'user', 'assistant'];

/** Why a parsed JSON line is not a conversation, or undefined when it is one. */
export function conversationProblem(v: unknown): string | undefined {
  if (!v || typeof v !== 'object' || Array.isArray(v)) return 'not a JSON object';
  const messages = (v as { messages?: unknown }).messages;
  if (!Array.isArray(messages)) return 'has no "messages" array';
  if (!messages.length) return '"messages" is empty';
  for (const [i, m] of messages.entries()) {
    if (!m || typeof m !== 'object') return `messages[${i}] is not an object`;
    const { role, content } = m as { role?: unknown; content?: unknown };
    if (typeof role !== 'string' || !ROLES.includes(role))
      return `messages[${i}].role must be one of ${ROLES.join(', ')}${typeof role === 'string' ? `, not "${role}"` : ''}`;
    if (typeof content !== 'string') return `messages[${i}].content must be a string`;
  }
  if (!messages.some((m) => (m as Message).role === 'assistant'))
    return 'has no assistant message (nothing to learn from)';
  return undefined;
}

const onlyMessages = (ms: readonly Message[]): Message[] => ms.map((m) => ({ role: m.role, content: m.content }));

/**
 * The conversations of a chat JSONL file (`{"messages": [...]}` per line, as
 * TRL reads them; optional `success`, `reward`, `valid_submission`, `group`).
 * Every bad line is reported as `FILE:LINE: why`, up to `limit` of them.
 */
export function readChatJsonl(file: string, shown = file, limit = 5): { examples: Example[]; problems: string[] } {
  const examples: Example[] = [];
  const problems: string[] = [];
  readFileSync(file, 'utf8')
    .split('\n')
    .forEach((text, i) => {
      if (!text.trim() || problems.length >= limit) return;
      const at = `${shown}:${i + 1}`;
      let v: unknown;
      try {
        v = JSON.parse(text);
      } catch (err) {
        problems.push(`${at}: not JSON (${(err as Error).message})`);
        return;
      }
      const why = conversationProblem(v);
      if (why) {
        problems.push(`${at}: not a conversation: ${why}`);
        return;
      }
      const o = v as {
        messages: Message[];
        success?: unknown;
        reward?: unknown;
        valid_submission?: unknown;
        group?: unknown;
      };
      const reward = typeof o.reward === 'number' ? o.reward : undefined;
      examples.push({
        messages: onlyMessages(o.messages),
        source: at,
        group: typeof o.group === 'string' ? o.group : at,
        success: typeof o.success === 'boolean' ? o.success : undefined,
        reward,
        valid: typeof o.valid_submission === 'boolean' ? o.valid_submission : undefined,
        rank: reward ?? 0,
      });
    });
  return { examples, problems };
}

/** Conversations of recorded trajectories; crashed rollouts and runs without a reply are left out and counted. */
export function trajectoryExamples(file: string, shown: string): { examples: Example[]; skipped: number } {
  const examples: Example[] = [];
  let skipped = 0;
  // mlepipe writes a trajectory file one record a line with no blank line between: a record's number is its line.
  readTrajectoriesSync(file).forEach((t: Partial<Trajectory> & { crashed?: unknown }, i) => {
    if (t.crashed || conversationProblem(t)) {
      skipped++;
      return;
    }
    const v: Partial<Trajectory['variables']> = t.variables ?? {};
    examples.push({
      messages: onlyMessages(t.messages!),
      source: `${shown}:${i + 1}`,
      group: t.task_id ?? `${shown}:${i + 1}`,
      success: v.success === undefined ? undefined : v.success === 1,
      reward: t.reward ?? null,
      valid: v.valid === undefined ? undefined : v.valid === 1,
      rank: v.improvement ?? t.reward ?? 0,
    });
  });
  return { examples, skipped };
}
