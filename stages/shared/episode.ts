// One rollout: a fresh sandbox workspace on the task, the scaffold driving
// the policy, then grading outside the jail and the trajectory record.
import { copyFile, lstat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { Rng } from '../../core/random.js';
import type { GuidanceRecord } from '../../agents/guidance/index.js';
import type { Policy } from '../../agents/policies/index.js';
import { canonicalJson, sha256 } from '../../core/hash.js';
import { HostFault } from '../../core/errors.js';
import type {
  AideOptions,
  EpisodeLimits,
  EpisodeResult,
  PromptFormat,
  Scaffold,
} from '../../agents/scaffolds/types.js';
import { readTaskView } from '../../agents/scaffolds/public.js';
import type { ReleaseOptions } from '../../agents/scaffolds/react/release-options.js';
import type { Trajectory } from '../../agents/trajectory.js';
import type { RewardInputs } from '../../core/rewards/presets.js';
import { gradeSubmission, type EvaluatorResult } from '../../sandbox/evaluate.js';
import type { Sandbox } from '../../sandbox/index.js';
import { starterScore, starterStd, type TaskRef } from './tasks.js';
import { scoreEpisode } from './score.js';

export interface RolloutOptions {
  sandbox: Sandbox;
  scaffold: Scaffold;
  policy: Policy;
  task: TaskRef;
  sample: number;
  groupId: string;
  limits: EpisodeLimits;
  memoryMb: number;
  aide: AideOptions;
  python: string;
  seed: number;
  /** Reward formula (already expanded), or undefined. */
  reward?: string;
  /** What the reward reads besides the formula (default mlepipe's: the final submission). */
  inputs?: RewardInputs;
  /** What a valid validate shows: nothing more (default), or the score and thresholds. */
  feedback?: 'none' | 'score';
  /** react: the reply format (default mlepipe's). */
  promptFormat?: PromptFormat;
  /** react under sandmle-release: the release's rules and texts (default: all its rules, mlepipe's wording). */
  release?: ReleaseOptions;
  /** Guided collection: shown to the teacher policy only (mlab). */
  guidance?: GuidanceRecord;
  signal: AbortSignal;
  /** Where to keep a copy of the graded submission (so that MLE-bench's own grader can grade it again). */
  keepSubmission?: string;
  /** The node's log (a run started again after its host was lost says so). */
  log?: (message: string) => void;
}

const fmt = (x: number | null) => (x === null ? 'none' : String(Number(x.toPrecision(6))));

/** The released Score tool's answer: the score, its direction and the four thresholds. */
export function scoreFeedback(r: EvaluatorResult): string {
  return `scores ${fmt(r.score)} (${r.is_lower_better ? 'lower' : 'higher'} is better); thresholds: gold ${fmt(r.gold_threshold)}, silver ${fmt(r.silver_threshold)}, bronze ${fmt(r.bronze_threshold)}, median ${fmt(r.median_threshold)}`;
}

/** Copies the submission file itself (never what a link points at); a missing one leaves nothing. */
async function keepCopy(workspace: string, name: string, dest: string): Promise<void> {
  const src = resolve(workspace, name);
  if (!src.startsWith(resolve(workspace) + '/')) return;
  const st = await lstat(src).catch(() => null);
  if (st?.isFile()) await copyFile(src, dest);
}

/**
 * A run whose sandbox host was lost under it (HostFault: its engine stopped answering mid-step) starts
 * again from a fresh workspace; the sandbox opens it on another host, having taken the lost one out
 * (sandbox/spread.ts). What the lost host did is thrown away, so the run is as if it had started there.
 * Each host is lost at most once per run; with none left, opening the session fails the run.
 */
export async function rollout(o: RolloutOptions): Promise<Trajectory> {
  const lost = new Set<string>();
  for (;;) {
    try {
      return await attempt(o);
    } catch (err) {
      if (!(err instanceof HostFault) || lost.has(err.host) || o.signal.aborted) throw err;
      lost.add(err.host);
      o.log?.(
        `${o.policy.name} on ${o.task.id} (sample ${o.sample}): its sandbox host ${err.host} was lost under it; the run starts again on another host`,
      );
    }
  }
}

async function attempt(o: RolloutOptions): Promise<Trajectory> {
  const started = new Date();
  // The prompt names the task's own files (MLE-bench competitions keep their own names).
  const task = await readTaskView(o.task.dir, o.task.id);
  // The signal reaches every step of the session: an interrupt kills the running one at once.
  const session = await o.sandbox.open({ task: o.task.dir, limits: { memoryMb: o.memoryMb }, signal: o.signal });
  let ep: EpisodeResult;
  let grade: Awaited<ReturnType<typeof gradeSubmission>> | undefined;
  try {
    const rng = new Rng('aide-search', `${o.seed}:${o.task.id}:${o.policy.name}:${o.sample}`);
    ep = await o.scaffold.run({
      task,
      session,
      publicDir: join(o.task.dir, 'public'),
      policy: o.policy,
      guidance: o.guidance,
      sample: o.sample,
      limits: o.limits,
      aide: o.aide,
      ...(o.promptFormat ? { promptFormat: o.promptFormat } : {}),
      ...(o.release ? { release: o.release } : {}),
      signal: o.signal,
      random: () => rng.next(),
      validate: async (path) => {
        // By default format only: the evaluator runs, but its score never reaches the agent.
        const g = await gradeSubmission(o.task.dir, session.workspace, { python: o.python, signal: o.signal }, path);
        if (!g.ok) return { ok: false, problem: g.error, ...(g.said !== undefined ? { said: g.said } : {}) };
        return o.feedback === 'score'
          ? { ok: true, feedback: scoreFeedback(g.result), result: g.result }
          : { ok: true, result: g.result };
      },
    });
    // An interrupted episode is thrown away, not graded.
    if (ep.submission && !o.signal.aborted) {
      grade = await gradeSubmission(
        o.task.dir,
        session.workspace,
        { python: o.python, signal: o.signal },
        ep.submission,
      );
      if (o.keepSubmission) await keepCopy(session.workspace, ep.submission, o.keepSubmission);
    }
  } finally {
    await session.close();
  }
  const evaluation = grade?.ok ? grade.result : null;
  const starter = await starterScore(o.task.dir);
  const score = scoreEpisode(ep, evaluation, starter, o.inputs, o.reward);
  return {
    ...ep,
    task_id: o.task.id,
    policy: o.policy.name,
    group_id: o.groupId,
    sample: o.sample,
    // Which guidance the teacher saw (its text stays in the guide stage's node, out of the messages).
    ...(o.guidance ? { guidance: { source: o.guidance.source, sha256: sha256(canonicalJson(o.guidance)) } } : {}),
    evaluation,
    grade_error: grade && !grade.ok ? grade.error : ep.submission ? null : 'no submission',
    ...(grade && !grade.ok && grade.fault ? { grader_fault: grade.fault } : {}),
    starter_score: starter,
    starter_std: await starterStd(o.task.dir),
    ...score,
    started: started.toISOString(),
    duration_ms: Date.now() - started.getTime(),
  };
}
