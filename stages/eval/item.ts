// One run of an eval node (a policy on a task, one repeat) as an item checkpoint: its trajectory.json and, when
// it submitted, the graded submission.csv. A node started again reads finished runs back instead of running them;
// a branch of a saved run (intervention.branch) replays that run's replies up to the drawn tool return.
import type { ReleaseOptions } from '../../agents/scaffolds/react/release-options.js';
import { existsSync } from 'node:fs';
import { copyFile, mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { GuidanceRecord } from '../../agents/guidance/index.js';
import type { Policy } from '../../agents/policies/index.js';
import { replaying } from '../../agents/policies/replay.js';
import type { Intervention } from '../../agents/scaffolds/mlab/intervene.js';
import type { Scaffold } from '../../agents/scaffolds/types.js';
import type { Trajectory } from '../../agents/trajectory.js';
import { readTrajectory, writeTrajectory } from '../../agents/trajectory-files.js';
import { Interrupted } from '../../core/errors.js';
import type { RewardInputs } from '../../core/rewards/presets.js';
import type { Sandbox } from '../../sandbox/index.js';
import type { StageContext } from '../contract.js';
import { aideOptions } from '../../agents/scaffolds/aide/presets.js';
import { rollout } from '../shared/episode.js';
import type { EpisodeLimits } from '../shared/limits.js';
import type { TaskRef } from '../shared/tasks.js';
import { branchTurn, replayMismatches, savedReplies, savedRun, type BranchRecord } from './branch.js';
import { slug, type EvalParams } from './index.js';
import { SCAFFOLDS } from './agents.js';
import { keptName } from './record.js';

/** What every run of the node shares. */
export interface EvalSetup {
  ctx: StageContext<EvalParams>;
  sandbox: Sandbox;
  scaffold: Scaffold;
  intervention?: Intervention;
  limits: EpisodeLimits;
  reward?: string;
  inputs: RewardInputs;
  guidance?: Map<string, GuidanceRecord>;
  /** sandmle-release: the release's rules and texts. */
  release?: ReleaseOptions;
  /** The saved runs of the eval stage `intervention.branch` names, by policy, task and repeat. */
  saved?: Map<string, Trajectory>;
}

/** One run: a policy (the node's `index`-th) on a task, repeat `repeat`. */
export interface EvalJob {
  task: TaskRef;
  policy: Policy;
  index: number;
  repeat: number;
}

/** The item a run is kept in, across attempts of the node. */
export const jobItemId = (job: EvalJob): string =>
  `${job.index}-${slug(job.policy.name)}__${job.task.id}__r${job.repeat}`;

/** The run's trajectory, from its item when a finished one is kept, else run now and kept. */
export async function runJob(s: EvalSetup, job: EvalJob): Promise<Trajectory> {
  const { ctx } = s;
  const itemId = jobItemId(job);
  let dir = await ctx.items.get(itemId);
  // A run the grader failed on says nothing of the agent: it is run again (the grader may be fixed by now).
  if (dir && (await readTrajectory(dir)).grader_fault) {
    await rm(dir, { recursive: true, force: true });
    dir = undefined;
  }
  dir ??= await ctx.items.put(itemId, (d) => runEpisode(s, job, d));
  const trajectory = await readTrajectory(dir);
  // The graded file is kept with the run's outputs, named by the run, for MLE-bench's own grader to grade again.
  if (existsSync(join(dir, 'submission.csv'))) {
    await mkdir(join(ctx.outDir, 'submissions'), { recursive: true });
    await copyFile(join(dir, 'submission.csv'), join(ctx.outDir, keptName(trajectory)));
  }
  if (trajectory.ended === 'policy_error')
    ctx.log(`${job.policy.name} on ${job.task.id}: the policy failed: ${trajectory.error}`);
  return trajectory;
}

/** Runs the episode into the item folder `d`; a branch of a saved run without a tool return keeps that run. */
async function runEpisode(s: EvalSetup, job: EvalJob, d: string): Promise<void> {
  const p = s.ctx.params;
  const branchFrom = p.intervention?.branch;
  // A branch of a saved run: its replies up to the drawn return, only that return changed.
  const base = s.saved && savedRun(s.saved, branchFrom!, job.policy.name, job.task.id, job.repeat);
  const at = base ? branchTurn(base, p.intervention!.tools ?? 'all', p.seed) : null;
  if (base && at === null) {
    await writeTrajectory(d, { ...base, branch: { from: branchFrom!, turn: null } });
    return;
  }
  const t = await rollout({
    ...episodeOptions(s, job),
    scaffold: base ? SCAFFOLDS[p.scaffold](p, s.intervention && { ...s.intervention, at: at! }) : s.scaffold,
    policy: base ? replaying(job.policy, savedReplies(base), at!) : job.policy,
    keepSubmission: join(d, 'submission.csv'),
  });
  if (t.ended === 'interrupted') throw new Interrupted();
  // The arm as given (no intervention) must reproduce the drawn return too; a changed one is compared up to it.
  const branch: BranchRecord | undefined = base
    ? {
        from: branchFrom!,
        turn: at,
        tool: base.turns[at!].name,
        replay_mismatches: replayMismatches(base, t, s.intervention ? at! : at! + 1),
      }
    : undefined;
  await writeTrajectory(d, branch ? { ...t, branch } : t);
}

/** The rollout's settings that do not depend on a branch. */
function episodeOptions(s: EvalSetup, job: EvalJob) {
  const p = s.ctx.params;
  return {
    sandbox: s.sandbox,
    task: job.task,
    sample: job.repeat,
    groupId: `${job.task.id}/${job.policy.name}`,
    limits: {
      maxTurns: s.limits.max_turns,
      stepTimeoutMs: s.limits.step_timeout * 1000,
      timeBudgetMs: s.limits.time_budget * 1000,
      contextTokens: p.context_tokens,
      observationChars: p.observation_chars,
    },
    memoryMb: p.memory_mb,
    aide: aideOptions(p.aide),
    python: s.ctx.python,
    seed: p.seed,
    reward: s.reward,
    inputs: s.inputs,
    feedback: p.feedback,
    promptFormat: p.prompt_format,
    release: s.release,
    guidance: s.guidance?.get(job.task.id),
    signal: s.ctx.signal,
    log: s.ctx.log,
  };
}
