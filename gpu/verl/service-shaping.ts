// The sandbox service's part in turn-level shaping for an exported verl job
// (docs/training.md): the solution bank, each step's references, the calls of
// an episode, and the scores the agent loop sends back. Scoring itself runs in
// the agent loop on verl's rollout servers (mlepipe_verl/turn_scores.py); what
// is here is mlepipe's own code for the rest (which turns are calls, the
// bank's draws and summaries, the reference message), so both trainers agree.
//
// The bank lives in the export folder (shaping/bank.jsonl, appended as it
// grows), beside verl's checkpoints: a service restarted for a resumed job
// reads it back. It starts from the demonstrations the export wrote (step 0)
// and grows from the episodes the service grades as verified (Eq. 5), tagged
// with the step whose weights sampled them; a step draws only from what
// earlier steps verified, as the worker trainer adds a step's solutions after
// its update.
import { appendFile, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { reduceSummary, SolutionBank, summarise, type BankEntry } from '../../agents/shaping/bank.js';
import { toolCalls } from '../../agents/shaping/calls.js';
import { referenceMessage } from '../../agents/shaping/spice.js';
import type { TurnScore } from '../../agents/shaping/types.js';
import type { EpisodeResult } from '../../agents/scaffolds/types.js';
import type { TurnRecord } from '../../agents/scaffolds/types.js';

/** shaping/config.json of an export. */
export interface ShapingConfig {
  kind: 'spice';
  beta: number;
  /** K: references drawn per task and step. */
  references: number;
  summaries: 'full' | 'reduced';
  /** The stage's seed: step k draws with `${seed}:${k}`, as the worker trainer does. */
  seed: number;
}

export interface ServiceShaping {
  readonly config: ShapingConfig;
  /** The episode's tool calls (history, where the call sits in the reply) and the step's reference messages. */
  plan(taskId: string, step: number, ep: EpisodeResult): unknown;
  /** A graded episode: its summary joins the bank when it is verified. */
  graded(taskId: string, step: number, ep: EpisodeResult, verified: boolean): Promise<void>;
  /** The loop's scores of one episode, for the step's metrics (shaping/scores.jsonl). */
  record(taskId: string, step: number, scores: readonly TurnScore[]): Promise<void>;
  bank(): SolutionBank;
}

/** Characters as Python counts them (code points): the agent loop finds the call's tokens by these offsets. */
const codePoints = (s: string) => [...s].length;

async function readLines<T>(file: string): Promise<T[]> {
  const text = await readFile(file, 'utf8').catch(() => '');
  return text
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as T);
}

/** The shaping side of the service for the export at `dir`, or undefined when it shapes nothing. */
export async function openShaping(dir: string): Promise<ServiceShaping | undefined> {
  const configFile = join(dir, 'shaping', 'config.json');
  const config = JSON.parse(await readFile(configFile, 'utf8').catch(() => 'null')) as ShapingConfig | null;
  if (!config) return undefined;
  const bankFile = join(dir, 'shaping', 'bank.jsonl');
  const bank = new SolutionBank(await readLines<BankEntry>(bankFile));
  const scoresFile = join(dir, 'shaping', 'scores.jsonl');
  return {
    config,
    bank: () => bank,
    plan(taskId, step, ep) {
      // What step `step` may draw from: the demonstrations and what earlier steps verified.
      const visible = new SolutionBank(bank.entries().filter((e) => e.source === 'demonstration' || e.step < step));
      const drawn = visible.draw(taskId, config.references, `${config.seed}:${step}`);
      const texts = drawn.map((e) => (config.summaries === 'reduced' ? reduceSummary(e.text) : e.text));
      const calls = toolCalls({ scaffold: ep.scaffold ?? 'react', messages: ep.messages, turns: ep.turns }).map((c) => ({
        turn: c.turn,
        category: c.category,
        history: c.history,
        prefix_chars: codePoints(c.prefix),
        call_chars: codePoints(c.call),
      }));
      return { calls, references: texts.map(referenceMessage), beta: config.beta, drawn: drawn.map((e) => e.from) };
    },
    async graded(taskId, step, ep, verified) {
      if (!verified) return;
      const entry: BankEntry = { task_id: taskId, text: summarise({ task_id: taskId, turns: ep.turns as TurnRecord[] }), source: 'rl', step, from: `${taskId}@${step}#${bank.size(taskId)}`, writer: 'procedural' };
      if (bank.add(entry)) await appendFile(bankFile, JSON.stringify(entry) + '\n');
    },
    async record(taskId, step, scores) {
      await appendFile(scoresFile, JSON.stringify({ task_id: taskId, step, scores }) + '\n');
    },
  };
}

/** The step's records (shaping/scores.jsonl) grouped by step, for the node's curve. */
export async function shapingRecords(dir: string): Promise<Map<number, TurnScore[]>> {
  const out = new Map<number, TurnScore[]>();
  for (const r of await readLines<{ step: number; scores: TurnScore[] }>(join(dir, 'shaping', 'scores.jsonl'))) out.set(r.step, [...(out.get(r.step) ?? []), ...r.scores]);
  return out;
}
