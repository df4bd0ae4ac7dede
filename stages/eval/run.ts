// The eval stage's run(): every policy on every task (repeats times) through
// the scaffold in the sandbox, then the trajectories, results and tables.
import type { PolicyRef } from '../../agents/policies/index.js';
import type { Trajectory } from '../../agents/trajectory.js';
import { StageFailure, UserError } from '../../core/errors.js';
import { mapLimit } from '../../core/pool.js';
import { rewardFormula, rewardInputs } from '../../core/rewards/presets.js';
import type { Sandbox } from '../../sandbox/index.js';
import type { Metrics, StageContext, StageResult } from '../contract.js';
import { announceKept } from '../shared/resume.js';
import { preloadFor, stageSandbox } from '../shared/sandbox.js';
import type { TaskRef } from '../shared/tasks.js';
import { evalAgents, type EvalAgents } from './agents.js';
import { loadSaved } from './branch.js';
import { evalTasks, factsByTask } from './facts.js';
import { loadGuidance } from './guidance.js';
import type { EvalParams } from './index.js';
import { episodeLimits } from './limits.js';
import { policyNames } from './policy-names.js';
import { jobItemId, runJob, type EvalJob, type EvalSetup } from './item.js';
import { jailsLine } from './jails-line.js';
import { writeOutputs } from './outputs.js';
import { releaseOptions, releaseTextMetrics } from '../shared/release-checkout.js';

/** The node's tasks, as evalTasks finds them; none at all is the user's to fix. */
async function tasksToRun(ctx: StageContext<EvalParams>): Promise<TaskRef[]> {
  const tasks = await evalTasks(ctx);
  if (!tasks.length) throw new UserError('no tasks to evaluate (are the upstream stages empty, or the split?)');
  return tasks;
}

/** Jails are reused from rollout to rollout: never more of them than rollouts. */
function evalSandbox(ctx: StageContext<EvalParams>, names: readonly { ref: PolicyRef }[], runs: number): Sandbox {
  const p = ctx.params;
  // A model writes code as a policy, or as the mlab AI actions' action_model (Edit Script (AI) runs what it wrote).
  const preload = preloadFor({
    models: names.some(({ ref }) => ref.kind === 'openai') || p.action_model !== undefined,
    mlab: p.scaffold === 'mlab',
  });
  return stageSandbox(ctx, Math.min(p.concurrency, runs), preload, { memoryMb: p.memory_mb });
}

export async function run(ctx: StageContext<EvalParams>): Promise<StageResult | void> {
  const p = ctx.params;
  // Before any model or jail starts: a checkout that cannot be read fails the node here.
  const release = await releaseOptions(p, ctx.experimentDir, ctx.python);
  const names = policyNames(p, ctx.models);
  const limits = episodeLimits(p);
  const tasks = await tasksToRun(ctx);
  const guidance = p.guidance ? loadGuidance(ctx.inputs, p.guidance, tasks) : undefined;
  const agents = await evalAgents(ctx, names, limits.max_turns);
  const branchFrom = p.intervention?.branch;
  const saved = branchFrom ? loadSaved(ctx.inputs, branchFrom) : undefined;
  const reward = p.reward ? rewardFormula(p.reward, ctx.rewards) : undefined;
  const inputs = rewardInputs(p.reward, ctx.rewards, p);
  const jobs: EvalJob[] = tasks.flatMap((task) =>
    agents.policies.flatMap((policy, index) =>
      Array.from({ length: p.repeats }, (_, repeat) => ({ task, policy, index, repeat })),
    ),
  );
  const { scaffold, intervention } = agents;
  const sandbox = evalSandbox(ctx, names, jobs.length);
  const setup: EvalSetup = { ctx, sandbox, scaffold, intervention, limits, reward, inputs, guidance, saved, release };
  const done = await runJobs(setup, jobs, agents);
  const metrics = await writeOutputs(
    ctx.outDir,
    done,
    names.map((n) => n.name),
    p,
    agents.policies,
    await factsByTask(tasks),
  );
  // Runs the grader failed on are recorded above, then fail the node: their scores are unknown, not bad.
  const faulted = graderFaults(done);
  if (faulted) throw new StageFailure(faulted);
  if (saved) Object.assign(metrics, branchMetrics(ctx, done));
  Object.assign(metrics, releaseTextMetrics(release));
  return { metrics };
}

/** Every run, `concurrency` at a time; the sandbox and the served models go when they are over. */
async function runJobs(s: EvalSetup, jobs: readonly EvalJob[], agents: EvalAgents): Promise<Trajectory[]> {
  const { ctx } = s;
  await announceKept(ctx, jobs.map(jobItemId), 'episodes');
  let finished = 0;
  let done: (Trajectory | undefined)[];
  try {
    done = await mapLimit(
      jobs,
      ctx.params.concurrency,
      async (job) => {
        const t = await runJob(s, job);
        ctx.progress({ done: ++finished, total: jobs.length, unit: 'episodes' });
        return t;
      },
      ctx.signal,
    );
  } finally {
    await Promise.all([s.sandbox.shutdown(), ...agents.served.map((m) => m.stop())]);
  }
  ctx.signal.throwIfAborted();
  const jails = s.sandbox.jails();
  if (jails.started || jails.handed) ctx.log(jailsLine({ ...jails, rollouts: jobs.length }));
  return done as Trajectory[];
}

/** What fails the node when the grader failed on some runs: how many, and on which tasks why. */
function graderFaults(done: readonly Trajectory[]): string | undefined {
  const faulted = done.filter((t) => t.grader_fault);
  if (!faulted.length) return undefined;
  const byTask = [...new Set(faulted.map((t) => t.task_id))].map(
    (id) =>
      `${id}: ${faulted.filter((t) => t.task_id === id).length} (${faulted.find((t) => t.task_id === id)!.grader_fault})`,
  );
  return `the grader failed on ${faulted.length} of ${done.length} runs (grade_error in results.jsonl): ${byTask.join('; ')}`;
}

/** How many saved runs were branched, and how many replayed turns did not show what the saved run saw. */
function branchMetrics(ctx: StageContext<EvalParams>, done: readonly Trajectory[]): Metrics {
  const branched = done.filter((t) => t.branch?.turn !== null && t.branch?.turn !== undefined);
  ctx.log(
    `branched ${branched.length} of ${done.length} saved runs of ${ctx.params.intervention?.branch}; the rest had no diagnostic return and are kept as they were`,
  );
  return {
    branched: branched.length,
    replay_mismatches: branched.reduce((a, t) => a + (t.branch?.replay_mismatches ?? 0), 0),
  };
}
