// The solution bank: per training task, summaries of verified solutions, the
// references SPICE and TIPS score against. It starts from verified
// demonstrations; solutions RL verifies are added between updates, so a step
// scores against the bank as it stood before its rollouts. A step draws up to
// K summaries per task without replacement, seeded by the step.
import { Rng } from '../../core/random.js';
import type { Trajectory } from '../trajectory.js';

export interface BankEntry {
  task_id: string;
  text: string;
  source: 'demonstration' | 'rl';
  /** The step that verified it (0: a demonstration). */
  step: number;
  /** Where it came from: the trajectory's group and sample. */
  from: string;
  /** Who wrote the text: a models: entry's name, or `procedural` (from the trajectory's record). */
  writer: string;
  /** Why a model asked for the summary did not write it (the procedural text stands in). */
  fallback?: string;
}

/** A summary and who wrote it: a models: entry's name, or `procedural` (with why, when a model was asked). */
export interface WrittenSummary {
  text: string;
  writer: string;
  fallback?: string;
}

/** A solution counts as verified when it meets Eq. 5 (a valid submission beating the starter baseline). */
export const isVerified = (t: Pick<Trajectory, 'variables'>): boolean => t.variables?.success === 1;

const clipLine = (s: string, n: number) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

/**
 * The code lines that say what was done: the last calls of the script (where a script acts on what it
 * defined above), without definitions, imports, prints and comments.
 */
function codeGist(code: string): string {
  const lines = code
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l.includes('(') && !/^(import|from|#|print\(|def |class |return\b|if __name__)/.test(l));
  return lines
    .slice(-2)
    .map((l) => clipLine(l, 90))
    .join('; ');
}

/**
 * A paragraph on how a verified trajectory solved its task: its actions in order, from what it recorded.
 * It names the approach, not the score or anything only the grader sees.
 */
export function summarise(t: Pick<Trajectory, 'task_id' | 'turns'>): string {
  const steps = t.turns.flatMap((turn) => {
    if (turn.action === 'tool')
      return [
        `ran the ${turn.name} diagnostic${turn.args && Object.keys(turn.args).length ? ` on ${clipLine(JSON.stringify(turn.args), 60)}` : ''}`,
      ];
    if (turn.action === 'action') return [`used ${turn.name}`];
    if (turn.action === 'validate') return ['validated the submission format'];
    if (turn.action === 'code' && turn.code)
      return turn.exit_code === 0 ? [`ran code (${codeGist(turn.code) || 'a script'})`] : [];
    return [];
  });
  const body = steps.length ? steps.map((s, i) => `(${i + 1}) ${s}`).join(', ') : 'submitted directly';
  return `A verified solution of ${t.task_id}: it ${body}, and its submission beat the starter baseline.`;
}

/** The reduced-summary control: each summary cut to the first half of its words. */
export function reduceSummary(text: string): string {
  const words = text.split(/\s+/).filter(Boolean);
  return words.slice(0, Math.max(1, Math.ceil(words.length / 2))).join(' ');
}

export class SolutionBank {
  private readonly byTask = new Map<string, BankEntry[]>();

  constructor(entries: ReadonlyArray<Omit<BankEntry, 'writer'> & { writer?: string }> = []) {
    // Banks saved before summaries recorded their writer were all written procedurally.
    for (const e of entries) this.add({ ...e, writer: e.writer ?? 'procedural' });
  }

  /** Adds a summary unless the task already holds the same text; true when it was new. */
  add(e: BankEntry): boolean {
    const list = this.byTask.get(e.task_id) ?? [];
    if (list.some((x) => x.text === e.text)) return false;
    this.byTask.set(e.task_id, [...list, e]);
    return true;
  }

  /**
   * Every verified trajectory's summary: the one `written` has for it (a model's), else the procedural
   * one. Returns how many were new.
   */
  addVerified(
    trajectories: readonly Trajectory[],
    source: BankEntry['source'],
    step: number,
    written?: (t: Trajectory) => WrittenSummary | undefined,
  ): number {
    let n = 0;
    for (const t of trajectories) {
      if (!isVerified(t)) continue;
      const w = written?.(t) ?? { text: summarise(t), writer: 'procedural' };
      if (
        this.add({
          task_id: t.task_id,
          text: w.text,
          source,
          step,
          from: `${t.group_id}#${t.sample}`,
          writer: w.writer,
          ...(w.fallback ? { fallback: w.fallback } : {}),
        })
      )
        n++;
    }
    return n;
  }

  size(task?: string): number {
    return task === undefined
      ? [...this.byTask.values()].reduce((n, l) => n + l.length, 0)
      : (this.byTask.get(task)?.length ?? 0);
  }

  /** Step k's frozen references for a task: up to k of its summaries without replacement, seeded. */
  draw(task: string, k: number, seed: string): BankEntry[] {
    const list = this.byTask.get(task) ?? [];
    return list.length <= k ? [...list] : new Rng('solution-bank', seed, task).shuffle(list).slice(0, k);
  }

  entries(): BankEntry[] {
    return [...this.byTask.values()].flat();
  }
}
