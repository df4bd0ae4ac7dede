// MLToolBench's paired observation intervention (App. B.3): each saved
// trajectory of an eval stage in needs: is branched at one diagnostic return
// drawn at random (seeded by the run, so every arm branches the same one). The
// branch replays the saved replies up to that call in a fresh workspace, shows
// the call's return as the arm says (as given, masked or paraphrased), and lets
// the policy go on with the same seed and the same remaining turns. A
// trajectory without a diagnostic return is kept as it was, with its outcome,
// in every arm, so all arms have the same denominator.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { chooseTools, type ToolChoice } from '../../agents/scaffolds/mlab/tools.js';
import { readTrajectoriesSync, TRAJECTORIES_FILE } from '../../agents/trajectory-files.js';
import type { Trajectory } from '../../agents/trajectory.js';
import { ParamError } from '../../core/errors.js';
import { Rng } from '../../core/random.js';
import type { InputNode } from '../contract.js';

/** What a branched (or kept) trajectory records about its branch. */
export type BranchRecord = NonNullable<Trajectory['branch']>;

const key = (policy: string, task: string, sample: number) => `${policy}\u0000${task}\u0000${sample}`;

/** The saved trajectories of the eval stage `from` in needs:, by policy, task and repeat. */
export function loadSaved(inputs: readonly InputNode[], from: string): Map<string, Trajectory> {
  const input = inputs.find((i) => i.name === from);
  const file = input && join(input.dir, TRAJECTORIES_FILE);
  if (!file || !existsSync(file))
    throw new ParamError(
      ['intervention', 'branch'],
      `${from} is not an eval stage in needs: (its trajectories.jsonl is what is branched)`,
    );
  const out = new Map<string, Trajectory>();
  for (const t of readTrajectoriesSync(file)) out.set(key(t.policy, t.task_id, t.sample), t);
  return out;
}

export function savedRun(
  saved: Map<string, Trajectory>,
  from: string,
  policy: string,
  task: string,
  sample: number,
): Trajectory {
  const t = saved.get(key(policy, task, sample));
  if (!t)
    throw new ParamError(
      ['intervention', 'branch'],
      `${from} holds no run of ${policy} on ${task} (repeat ${sample}): a branch needs the same policies, tasks and repeats`,
    );
  return t;
}

/** The diagnostic returns that can be branched at: tool calls that answered (with evidence) from the chosen tools. */
export function branchable(t: Pick<Trajectory, 'turns'>, tools: ToolChoice): number[] {
  const names = new Set(chooseTools(tools).map((x) => x.name));
  return t.turns.flatMap((turn, i) =>
    turn.action === 'tool' && turn.evidence && turn.name && names.has(turn.name) ? [i] : [],
  );
}

/** The branch turn of one saved run: the same in every arm of the same seed, or null without a return. */
export function branchTurn(
  t: Pick<Trajectory, 'turns' | 'task_id' | 'policy' | 'sample'>,
  tools: ToolChoice,
  seed: number,
): number | null {
  const at = branchable(t, tools);
  return at.length ? new Rng('intervention-branch', `${seed}:${t.policy}:${t.task_id}:${t.sample}`).pick(at) : null;
}

/** The saved run's assistant replies, one per turn (what the replay gives the scaffold again). */
export function savedReplies(t: Pick<Trajectory, 'messages'>): string[] {
  return t.messages.filter((m) => m.role === 'assistant').map((m) => m.content);
}

// A script's observation says how long it ran: that may differ between a run and its replay.
const untimed = (obs: string | undefined) => obs?.replace(/^exit code (-?\d+) · [\d.]+ s/, 'exit code $1');

/** Replayed turns (those before `end`) whose observation is not the saved one, run times aside. */
export function replayMismatches(
  saved: Pick<Trajectory, 'turns'>,
  replayed: Pick<Trajectory, 'turns'>,
  end: number,
): number {
  let n = 0;
  for (let i = 0; i < end; i++)
    if (untimed(saved.turns[i]?.observation) !== untimed(replayed.turns[i]?.observation)) n++;
  return n;
}
