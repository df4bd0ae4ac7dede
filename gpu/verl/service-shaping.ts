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
//
// Without a written β, the first pilot_steps steps the job plans are the pilot:
// their calls are scored and recorded but shaped by nothing (β is null in the
// plan, so they train on the outcome alone), and the first plan of a later
// step calibrates β from them (Eq. 8, calibrateBeta) into
// shaping/calibration.json, which every later plan, and a restarted service,
// uses. The worker trainer's pilot runs extra rollouts that are not trained on;
// verl gives no hook before its first step, so here the pilot's steps train.
//
// The shuffle control permutes d among a task's calls of one category across
// the step's group, as the worker does over its batch: /shaping/record then
// answers a task's episodes together, once all group_size have reported.
import { appendFile, readFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import {
  reduceSummary,
  SolutionBank,
  summarise,
  type BankEntry,
  type WrittenSummary,
} from '../../agents/shaping/bank.js';
import { modelSummary } from '../../agents/shaping/summarizer.js';
import { LlmClient } from '../../agents/llm/client.js';
import type { Trajectory } from '../../agents/trajectory.js';
import type { ModelSpec } from '../../core/models.js';
import { toolCalls } from '../../agents/shaping/calls.js';
import { referenceMessage } from '../../agents/shaping/spice.js';
import { TIPS_REQUEST } from '../../agents/shaping/tips.js';
import type { TurnScore } from '../../agents/shaping/types.js';
import { calibrateBeta, DEFAULT_KAPPA, shuffleScores, type Calibration } from '../../agents/shaping/returns.js';
import { StageFailure } from '../../core/errors.js';
import { writeFileAtomic } from '../../core/fs.js';
import { readJson, readJsonl } from '../../core/json-files.js';
import type { EpisodeResult } from '../../agents/scaffolds/types.js';
import type { TurnRecord } from '../../agents/scaffolds/types.js';

/** shaping/config.json of an export. */
export interface ShapingConfig {
  kind: 'spice' | 'tips';
  /** β as written; absent: the pilot calibrates it to kappa on the job's first pilot_steps steps. */
  beta?: number;
  kappa?: number | [number, number];
  pilot_steps?: number;
  /** The shuffle control: a step's d values permuted among the same task's calls of one category across its group. */
  shuffle?: boolean;
  /** Episodes a task has in a step (verl's rollout.n): the shuffle waits for all of them. */
  group_size?: number;
  /** How long the shuffle waits for a group's last episode (one that crashed never reports), in ms. */
  group_wait_ms?: number;
  /** The model that writes the bank's summaries (an OpenAI-compatible endpoint); absent: from the episode's record. */
  summarizer?: { name: string; spec: ModelSpec };
  /** K: references drawn per task and step. */
  references: number;
  summaries: 'full' | 'reduced';
  /** The stage's seed: step k draws with `${seed}:${k}`, as the worker trainer does. */
  seed: number;
}

export interface ServiceShaping {
  readonly config: ShapingConfig;
  /** The episode's tool calls (history, where the call sits in the reply), the step's reference messages and β (null in the pilot). */
  plan(taskId: string, step: number, ep: EpisodeResult): Promise<unknown>;
  /** A graded episode: its summary joins the bank when it is verified. */
  graded(taskId: string, step: number, ep: EpisodeResult, verified: boolean): Promise<void>;
  /** The loop's scores of one episode, for the step's metrics (shaping/scores.jsonl); returns the scores to shape by (shuffled under the control). */
  record(taskId: string, step: number, scores: readonly TurnScore[]): Promise<TurnScore[]>;
  bank(): SolutionBank;
  /** Answers the shuffle's waiting groups now (the service is stopping) and clears their timers. */
  close(): void;
}

/** Characters as Python counts them (code points): the agent loop finds the call's tokens by these offsets. */
const codePoints = (s: string) => [...s].length;

/** A JSON Lines file of the export's shaping/, empty while it has not been written. */
async function readLines<T>(file: string): Promise<T[]> {
  return existsSync(file) ? readJsonl<T>(file) : [];
}

/** A JSON file of the export's shaping/, null while it has not been written. */
async function readIfWritten<T>(file: string): Promise<T | null> {
  return existsSync(file) ? readJson<T | null>(file) : null;
}

/** The shaping side of the service for the export at `dir`, or undefined when it shapes nothing. */
export async function openShaping(dir: string): Promise<ServiceShaping | undefined> {
  const config = await readIfWritten<ShapingConfig>(join(dir, 'shaping', 'config.json'));
  if (!config) return undefined;
  const bankFile = join(dir, 'shaping', 'bank.jsonl');
  const bank = new SolutionBank(await readLines<BankEntry>(bankFile));
  const betaFor = await betaSchedule(dir, config, bank);
  const summaryOf = bankSummaries(dir, config);
  const groups = shuffleGroups(config);
  return {
    config,
    bank: () => bank,
    close: () => groups.close(),
    async plan(taskId, step, ep) {
      const { drawn, ...calls } = planCalls(config, bank, taskId, step, ep);
      return { ...calls, beta: await betaFor(step), drawn };
    },
    async graded(taskId, step, ep, verified) {
      if (!verified) return;
      const w = await summaryOf(taskId, ep);
      const entry: BankEntry = {
        task_id: taskId,
        text: w.text,
        source: 'rl',
        step,
        from: `${taskId}@${step}#${bank.size(taskId)}`,
        writer: w.writer,
        ...(w.fallback ? { fallback: w.fallback } : {}),
      };
      if (bank.add(entry)) await appendFile(bankFile, JSON.stringify(entry) + '\n');
    },
    async record(taskId, step, scores) {
      await appendFile(join(dir, 'shaping', 'scores.jsonl'), JSON.stringify({ task_id: taskId, step, scores }) + '\n');
      return config.shuffle ? groups.shuffled(taskId, step, scores) : [...scores];
    },
  };
}

/** An episode's plan without β: its tool calls, and the references step `step` draws for its task. */
function planCalls(config: ShapingConfig, bank: SolutionBank, taskId: string, step: number, ep: EpisodeResult) {
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
    // TIPS: the history after the call's observation, where the potential is taken again.
    ...(config.kind === 'tips' ? { after: c.after } : {}),
  }));
  // SPICE scores each call after a reference message; TIPS scores the references themselves, after a request.
  // A SPICE reference over the context is rebuilt around a cut summary (turn_scores.py): the summaries and the
  // message's text around one come with the messages.
  const refs =
    config.kind === 'tips'
      ? { summaries: texts, request: TIPS_REQUEST }
      : {
          references: texts.map(referenceMessage),
          reference_summaries: texts.map((t) => t.trim()),
          reference_frame: referenceMessage('\u0000').content.split('\u0000'),
        };
  return { kind: config.kind, calls, ...refs, drawn: drawn.map((e) => e.from) };
}

/**
 * β for a step's plan: as written, calibrated, or null while the step is one of the pilot's. The pilot starts at
 * the first step planned (shaping/pilot.json); the first plan after it calibrates β (shaping/calibration.json).
 */
async function betaSchedule(dir: string, config: ShapingConfig, bank: SolutionBank) {
  const calibrationFile = join(dir, 'shaping', 'calibration.json');
  const pilotFile = join(dir, 'shaping', 'pilot.json');
  let calibration = await readIfWritten<Calibration>(calibrationFile);
  let pilot = await readIfWritten<{ first_step: number }>(pilotFile);
  return async (step: number): Promise<number | null> => {
    if (config.beta !== undefined) return config.beta;
    if (calibration) return calibration.beta;
    if (!pilot) {
      pilot = { first_step: step };
      await writeFileAtomic(pilotFile, JSON.stringify(pilot) + '\n');
    }
    const first = pilot.first_step;
    const last = pilotLastStep(first, config.pilot_steps);
    if (step <= last) return null;
    const scores = [...(await shapingRecords(dir))].filter(([k]) => k >= first && k <= last).flatMap(([, l]) => l);
    const cal = calibrateBeta(
      scores.flatMap((t) => (t.d === null ? [] : [t.d])),
      config.kappa ?? DEFAULT_KAPPA,
    );
    if (!cal) {
      const why = (r: string) => scores.filter((t) => t.reason === r).length;
      throw new StageFailure(
        `the pilot (steps ${first}–${last}) scored no tool call (${scores.length} calls, ${why('no-reference')} without a reference, ${why('overflow')} over the context; ${bank.size()} summaries in the bank): nothing to calibrate beta on; give shaping.beta, or demonstrations with verified solutions in needs:`,
      );
    }
    calibration = cal;
    await writeFileAtomic(calibrationFile, JSON.stringify(cal, null, 1) + '\n');
    return cal.beta;
  };
}

/** The summarizer, asked as the worker trainer asks it (modelSummary); what it cannot write is written procedurally, with why. */
function bankSummaries(dir: string, config: ShapingConfig) {
  let client: LlmClient | undefined;
  return async (taskId: string, ep: EpisodeResult): Promise<WrittenSummary> => {
    const t = { ...ep, task_id: taskId, turns: ep.turns as TurnRecord[] } as unknown as Trajectory;
    const s = config.summarizer;
    if (!s) return { text: summarise(t), writer: 'procedural' };
    try {
      client ??= new LlmClient({ name: s.name, spec: s.spec, cacheDir: join(dir, 'shaping', 'llm') });
    } catch (err) {
      return { text: summarise(t), writer: 'procedural', fallback: `${s.name}: ${(err as Error).message}` };
    }
    const description = await readFile(join(dir, 'tasks', taskId, 'public', 'description.md'), 'utf8').catch(() => '');
    return modelSummary(client, s.name, t, description);
  };
}

interface Group {
  entries: { scores: readonly TurnScore[]; answer: (s: TurnScore[]) => void }[];
  timer?: NodeJS.Timeout;
  settle?: () => void;
}

/** The shuffle control's groups: a task's episodes of one step, answered together once all have reported. */
function shuffleGroups(config: ShapingConfig) {
  const groups = new Map<string, Group>();
  const settle = (key: string, taskId: string, step: number) => {
    const g = groups.get(key);
    if (!g) return;
    groups.delete(key);
    clearTimeout(g.timer);
    // Episodes report in the order they finish, which the load decides: the members are put in the order of
    // their scores first, so that the permutation depends on the group and the seed alone.
    const members = [...g.entries].sort((a, b) => byCodePoint(memberOrder(a.scores), memberOrder(b.scores)));
    const flat = members.flatMap((e, i) => e.scores.map((t) => ({ ...t, task_id: taskId, member: i })));
    const used = shuffleScores(flat, `${config.seed}:${step}`);
    members.forEach((e, i) =>
      e.answer(used.filter((t) => t.member === i).map(({ task_id: _t, member: _m, ...t }) => t)),
    );
  };
  let closed = false;
  return {
    shuffled: (taskId: string, step: number, scores: readonly TurnScore[]) =>
      new Promise<TurnScore[]>((answer) => {
        // A stopping service waits for nobody: an episode alone is its own group.
        if (closed) return answer([...scores]);
        const key = `${taskId}\u0000${step}`;
        const g = groups.get(key) ?? { entries: [] };
        groups.set(key, g);
        g.entries.push({ scores, answer });
        // A member that crashed never reports: the group is shuffled among those that did, after the wait.
        g.settle ??= () => settle(key, taskId, step);
        g.timer ??= setTimeout(g.settle, config.group_wait_ms ?? 3_600_000);
        if (g.entries.length >= (config.group_size ?? 1)) settle(key, taskId, step);
      }),
    close: () => {
      closed = true;
      [...groups.values()].forEach((g) => g.settle?.());
    },
  };
}

/** The pilot's last step: its steps start at the first step the job planned and are `pilot_steps` long (default 1). */
export const pilotLastStep = (firstStep: number, pilotSteps: number | undefined): number =>
  firstStep + (pilotSteps ?? 1) - 1;

/** A shuffle group member's place: its scores as text (the same episode's scores give the same place). */
export const memberOrder = (scores: readonly TurnScore[]): string =>
  JSON.stringify(scores.map((t) => [t.turn, t.category, t.d]));
/** Text order by code point, the same on every machine (localeCompare follows the machine's locale). */
export const byCodePoint = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** The step's records (shaping/scores.jsonl) grouped by step, for the node's curve. */
export async function shapingRecords(dir: string): Promise<Map<number, TurnScore[]>> {
  const out = new Map<number, TurnScore[]>();
  for (const r of await readLines<{ step: number; scores: TurnScore[] }>(join(dir, 'shaping', 'scores.jsonl')))
    out.set(r.step, [...(out.get(r.step) ?? []), ...r.scores]);
  return out;
}

/** The pilot's calibration and its first step, when the job calibrated β (shaping/calibration.json, pilot.json). */
export async function shapingCalibration(dir: string): Promise<(Calibration & { first_step: number }) | undefined> {
  const cal = await readIfWritten<Calibration>(join(dir, 'shaping', 'calibration.json'));
  const pilot = await readIfWritten<{ first_step: number }>(join(dir, 'shaping', 'pilot.json'));
  return cal && pilot ? { ...cal, first_step: pilot.first_step } : undefined;
}
