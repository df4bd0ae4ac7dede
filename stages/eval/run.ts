// The eval stage's run(): every policy on every task (repeats times) through
// the scaffold in the sandbox, then the trajectories, results and tables.
import { mapLimit } from '../../core/pool.js';
import { existsSync } from 'node:fs';
import { copyFile, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { makePolicy, type Policy } from '../../agents/policies/index.js';
import { replaying } from '../../agents/policies/replay.js';
import { aide } from '../../agents/scaffolds/aide/index.js';
import { mlabScaffold } from '../../agents/scaffolds/mlab/index.js';
import { react } from '../../agents/scaffolds/react/index.js';
import type { Intervention } from '../../agents/scaffolds/mlab/intervene.js';
import type { Scaffold } from '../../agents/scaffolds/types.js';
import type { Trajectory } from '../../agents/trajectory.js';
import { rewardFormula, rewardInputs } from '../../core/rewards/presets.js';
import { humanRank } from '../../tasks/leaderboard.js';
import { medalReport } from '../../tasks/medals.js';
import type { Metrics, StageContext, StageResult } from '../contract.js';
import { preloadFor, stageSandbox } from '../shared/sandbox.js';
import { serveForSampling, type ServedModel } from '../shared/worker.js';
import {
  gradingReport,
  latencyRows,
  mlebenchReport,
  policyRows,
  taskRows,
  winRateRows,
  type RunRecord,
} from './aggregate.js';
import { branchTurn, loadSaved, replayMismatches, savedReplies, savedRun, type BranchRecord } from './branch.js';
import { interventionOf } from './intervention.js';
import { rollout } from '../shared/episode.js';
import { listTasks } from '../shared/tasks.js';
import { loadGuidance } from './guidance.js';
import { episodeLimits, type EvalParams, policyNames, slug } from './index.js';

const SCAFFOLDS: Record<EvalParams['scaffold'], (p: EvalParams, iv?: Intervention, actionModel?: Policy) => Scaffold> =
  {
    react: () => react,
    aide: () => aide,
    mlab: (p, iv, actionModel) =>
      mlabScaffold({
        tools: p.tools ?? 'domain',
        toolDropout: p.tool_dropout ?? 0,
        seed: p.seed,
        ...(iv ? { intervention: iv } : {}),
        ...(actionModel ? { actionModel } : {}),
      }),
  };

export async function run(ctx: StageContext<EvalParams>): Promise<StageResult | void> {
  const p = ctx.params;
  const python = ctx.python;
  const names = policyNames(p, ctx.models);
  const lim = episodeLimits(p);
  const tasks = await listTasks({
    tasks: p.tasks,
    split: p.split,
    limit: p.limit,
    inputs: ctx.inputs,
    experimentDir: ctx.experimentDir,
  });
  if (!tasks.length) throw new Error('no tasks to evaluate (are the upstream stages empty, or the split?)');
  const guidance = p.guidance ? loadGuidance(ctx.inputs, p.guidance, tasks) : undefined;
  const sampling = {
    temperature: p.temperature,
    max_tokens: p.max_tokens,
    seed: p.seed,
    stop: p.stop,
    logprobs: p.logprobs,
  };
  // `provider: worker` policies are served for this node; the response cache is left out for them, since
  // its key names the model, not the weights a worker loaded (the node's own key covers them).
  const served: ServedModel[] = [];
  const models = { ...ctx.models };
  try {
    for (const { ref } of names) {
      if (
        ref.kind !== 'openai' ||
        ctx.models[ref.model].provider !== 'worker' ||
        models[ref.model] !== ctx.models[ref.model]
      )
        continue;
      const s = await serveForSampling(ctx, ref.model);
      served.push(s);
      models[ref.model] = s.spec;
    }
  } catch (err) {
    await Promise.all(served.map((s) => s.stop()));
    throw err;
  }
  const policies: Policy[] = names.map(({ name, ref }) => {
    const onWorker = ref.kind === 'openai' && ctx.models[ref.model].provider === 'worker';
    const cacheDir = onWorker ? undefined : join(ctx.cacheRoot, 'llm');
    return makePolicy(name, ref, models, {
      cacheDir,
      sampling,
      log: ctx.log,
      inputDirs: ctx.inputs.map((i) => i.dir),
      experimentDir: ctx.experimentDir,
      maxTurns: lim.max_turns,
    });
  });
  const iv = interventionOf(p, models, { cacheDir: join(ctx.cacheRoot, 'llm'), sampling, log: ctx.log }, ctx.signal);
  const actionModel = p.action_model
    ? makePolicy(p.action_model, { kind: 'openai', model: p.action_model }, models, {
        cacheDir: join(ctx.cacheRoot, 'llm'),
        sampling,
        log: ctx.log,
      })
    : undefined;
  const scaffold = SCAFFOLDS[p.scaffold](p, iv, actionModel);
  const branchFrom = p.intervention?.branch;
  const saved = branchFrom ? loadSaved(ctx.inputs, branchFrom) : undefined;
  const reward = p.reward ? rewardFormula(p.reward, ctx.rewards) : undefined;
  const inputs = rewardInputs(p.reward, ctx.rewards, p);
  const jobs = tasks.flatMap((task) =>
    policies.flatMap((policy, pi) => Array.from({ length: p.repeats }, (_, repeat) => ({ task, policy, pi, repeat }))),
  );
  // Jails are reused from rollout to rollout: never more of them than rollouts.
  // A model writes code as a policy, or as the mlab AI actions' action_model (Edit Script (AI) runs what it wrote).
  const preload = preloadFor({
    models: names.some(({ ref }) => ref.kind === 'openai') || p.action_model !== undefined,
    mlab: p.scaffold === 'mlab',
  });
  const sandbox = stageSandbox(ctx, Math.min(p.concurrency, jobs.length), preload, { memoryMb: p.memory_mb });
  let finished = 0;
  const one = async ({ task, policy, pi, repeat }: (typeof jobs)[number]): Promise<Trajectory> => {
    const itemId = `${pi}-${slug(policy.name)}__${task.id}__r${repeat}`;
    let dir = await ctx.items.get(itemId);
    // A run the grader failed on says nothing of the agent: it is run again (the grader may be fixed by now).
    if (dir && (JSON.parse(await readFile(join(dir, 'trajectory.json'), 'utf8')) as Trajectory).grader_fault) {
      await rm(dir, { recursive: true, force: true });
      dir = undefined;
    }
    if (!dir) {
      // A branch of a saved run: its replies up to the drawn return, only that return changed.
      const base = saved && savedRun(saved, branchFrom!, policy.name, task.id, repeat);
      const at = base ? branchTurn(base, p.intervention!.tools ?? 'all', p.seed) : null;
      dir = await ctx.items.put(itemId, async (d) => {
        if (base && at === null) {
          await writeFile(
            join(d, 'trajectory.json'),
            JSON.stringify({ ...base, branch: { from: branchFrom!, turn: null } }) + '\n',
          );
          return;
        }
        const t = await rollout({
          sandbox,
          scaffold: base ? SCAFFOLDS[p.scaffold](p, iv && { ...iv, at: at! }) : scaffold,
          policy: base ? replaying(policy, savedReplies(base), at!) : policy,
          task,
          sample: repeat,
          groupId: `${task.id}/${policy.name}`,
          limits: {
            maxTurns: lim.max_turns,
            stepTimeoutMs: lim.step_timeout * 1000,
            timeBudgetMs: lim.time_budget * 1000,
            contextTokens: p.context_tokens,
            observationChars: p.observation_chars,
          },
          memoryMb: p.memory_mb,
          aide: { numDrafts: p.aide.num_drafts, debugProb: p.aide.debug_prob, maxDebugDepth: p.aide.max_debug_depth },
          python,
          seed: p.seed,
          reward,
          inputs,
          feedback: p.feedback,
          promptFormat: p.prompt_format,
          guidance: guidance?.get(task.id),
          signal: ctx.signal,
          keepSubmission: join(d, 'submission.csv'),
          log: ctx.log,
        });
        if (t.ended === 'interrupted') throw new Error('interrupted');
        // The arm as given (no intervention) must reproduce the drawn return too; a changed one is compared up to it.
        const branch: BranchRecord | undefined = base
          ? {
              from: branchFrom!,
              turn: at,
              tool: base.turns[at!].name,
              replay_mismatches: replayMismatches(base, t, iv ? at! : at! + 1),
            }
          : undefined;
        await writeFile(join(d, 'trajectory.json'), JSON.stringify(branch ? { ...t, branch } : t) + '\n');
      });
    }
    const trajectory = JSON.parse(await readFile(join(dir, 'trajectory.json'), 'utf8')) as Trajectory;
    // The graded file is kept with the run's outputs, named by the run, for MLE-bench's own grader to grade again.
    if (existsSync(join(dir, 'submission.csv'))) {
      await mkdir(join(ctx.outDir, 'submissions'), { recursive: true });
      await copyFile(join(dir, 'submission.csv'), join(ctx.outDir, keptName(trajectory)));
    }
    if (trajectory.ended === 'policy_error')
      ctx.log(`${policy.name} on ${task.id}: the policy failed: ${trajectory.error}`);
    ctx.progress(++finished, jobs.length);
    return trajectory;
  };
  let done: (Trajectory | undefined)[];
  try {
    done = await mapLimit(jobs, p.concurrency, one, ctx.signal);
  } finally {
    await Promise.all([sandbox.shutdown(), ...served.map((s) => s.stop())]);
  }
  if (ctx.signal.aborted) throw new Error('interrupted');
  const jails = sandbox.jails();
  if (jails.started || jails.handed)
    ctx.log(
      `sandbox: ${jails.started} warm jails started and ${jails.handed} taken over from an earlier stage for ${jobs.length} rollouts (${jails.reused} sessions in a reused jail)`,
    );
  const facts = new Map(await Promise.all(tasks.map(async (t) => [t.id, await taskFacts(t.dir)] as const)));
  const metrics = await writeOutputs(
    ctx.outDir,
    done as Trajectory[],
    names.map((n) => n.name),
    p,
    policies,
    facts,
  );
  // Runs the grader failed on are recorded above, then fail the node: their scores are unknown, not bad.
  const faulted = (done as Trajectory[]).filter((t) => t.grader_fault);
  if (faulted.length) {
    const byTask = [...new Set(faulted.map((t) => t.task_id))].map(
      (id) =>
        `${id}: ${faulted.filter((t) => t.task_id === id).length} (${faulted.find((t) => t.task_id === id)!.grader_fault})`,
    );
    throw new Error(
      `the grader failed on ${faulted.length} of ${done.length} runs (grade_error in results.jsonl): ${byTask.join('; ')}`,
    );
  }
  if (saved) {
    const branched = (done as Trajectory[]).filter((t) => t.branch?.turn !== null && t.branch?.turn !== undefined);
    Object.assign(metrics, {
      branched: branched.length,
      replay_mismatches: branched.reduce((a, t) => a + (t.branch?.replay_mismatches ?? 0), 0),
    });
    ctx.log(
      `branched ${branched.length} of ${done.length} saved runs of ${branchFrom}; the rest had no diagnostic return and are kept as they were`,
    );
  }
  return { metrics };
}

/** What a task states about its thresholds and direction, for runs its evaluator never graded. */
export interface TaskFacts {
  gold_threshold: number | null;
  silver_threshold: number | null;
  bronze_threshold: number | null;
  median_threshold: number | null;
  is_lower_better: boolean | null;
  /** The human leaderboard's scores in rank order (MLE-bench tasks), for HumanRank. */
  leaderboard: { scores: number[]; is_lower_better: boolean } | null;
}

const NO_FACTS: TaskFacts = {
  gold_threshold: null,
  silver_threshold: null,
  bronze_threshold: null,
  median_threshold: null,
  is_lower_better: null,
  leaderboard: null,
};

/** A task's threshold.json and task.json direction (MLE-bench reports thresholds even for a run without a valid submission). */
export async function taskFacts(dir: string): Promise<TaskFacts> {
  const read = async (p: string) => JSON.parse(await readFile(p, 'utf8').catch(() => '{}')) as Record<string, unknown>;
  const th = await read(join(dir, 'private', 'threshold.json')).catch(() => ({}) as Record<string, unknown>);
  const task = await read(join(dir, 'task.json')).catch(() => ({}) as Record<string, unknown>);
  const lb = await read(join(dir, 'private', 'leaderboard.json')).catch(() => ({}) as Record<string, unknown>);
  const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : null);
  return {
    gold_threshold: num(th.gold_threshold),
    silver_threshold: num(th.silver_threshold),
    bronze_threshold: num(th.bronze_threshold),
    median_threshold: num(th.median_threshold),
    is_lower_better: typeof task.is_lower_better === 'boolean' ? task.is_lower_better : null,
    leaderboard: Array.isArray(lb.scores)
      ? {
          scores: lb.scores.map((x) => (typeof x === 'number' ? x : NaN)),
          is_lower_better: lb.is_lower_better === true,
        }
      : null,
  };
}

/** Where a run's graded submission is kept, relative to the node's outputs. */
export const keptName = (t: Pick<Trajectory, 'policy' | 'task_id' | 'sample'>) =>
  join('submissions', `${slug(t.policy)}__${t.task_id}__r${t.sample}.csv`);

/** The report fields of one run; what no grade says comes from the task's own files. */
export function runRecord(t: Trajectory, repeat: number, facts: TaskFacts = NO_FACTS): RunRecord {
  const m = medalReport(t.evaluation);
  const e = t.evaluation;
  return {
    task_id: t.task_id,
    policy: t.policy,
    repeat,
    ...m,
    is_lower_better: m.is_lower_better ?? facts.is_lower_better,
    gold_threshold: e ? e.gold_threshold : facts.gold_threshold,
    silver_threshold: e ? e.silver_threshold : facts.silver_threshold,
    bronze_threshold: e ? e.bronze_threshold : facts.bronze_threshold,
    median_threshold: e ? e.median_threshold : facts.median_threshold,
    created_at: new Date(Date.parse(t.started) + t.duration_ms).toISOString(),
    human_rank: facts.leaderboard
      ? humanRank(m.score, facts.leaderboard.scores, facts.leaderboard.is_lower_better)
      : null,
    success: t.starter_score === null ? null : t.variables.success === 1,
    turns: t.turns.length,
    duration_s: Number((t.duration_ms / 1000).toFixed(3)),
    ended: t.ended,
    format: t.variables.format,
    reward: t.reward,
    submission: t.submission,
    kept_submission: t.submission ? keptName(t) : null,
    grade_error: t.grade_error,
    grade_status: t.grader_fault ? 'grade_error' : t.evaluation ? 'graded' : t.submission ? 'invalid' : 'no_submission',
    grader_fault: t.grader_fault ?? null,
    step_seconds: t.turns
      .filter((x) => x.action === 'code' && x.exit_code !== null)
      .map((x) => Number((x.duration_ms / 1000).toFixed(4))),
    ...(t.scaffold === 'mlab'
      ? { tools_called: t.turns.filter((x) => x.action === 'tool' && x.name).map((x) => x.name!) }
      : {}),
  };
}

export async function writeOutputs(
  out: string,
  trajectories: Trajectory[],
  names: string[],
  p: EvalParams,
  policies: Policy[],
  facts: Map<string, TaskFacts>,
): Promise<Metrics> {
  const runs = trajectories.map((t) => runRecord(t, t.sample, facts.get(t.task_id)));
  await writeFile(join(out, 'trajectories.jsonl'), trajectories.map((t) => JSON.stringify(t)).join('\n') + '\n');
  await writeFile(join(out, 'results.jsonl'), runs.map((r) => JSON.stringify(r)).join('\n') + '\n');
  await writeFile(join(out, 'grading_report.json'), JSON.stringify(gradingReport(runs, names), null, 2) + '\n');
  // MLE-bench's own report, one per policy, field for field.
  await mkdir(join(out, 'mlebench'), { recursive: true });
  for (const name of names)
    await writeFile(
      join(out, 'mlebench', `${slug(name)}_grading_report.json`),
      JSON.stringify(mlebenchReport(runs.filter((r) => r.policy === name)), null, 2) + '\n',
    );
  const journals = trajectories.filter((t) => t.journal);
  if (journals.length) {
    await mkdir(join(out, 'journals'), { recursive: true });
    for (const t of journals)
      await writeFile(
        join(out, 'journals', `${slug(t.policy)}__${t.task_id}__r${t.sample}.json`),
        JSON.stringify(t.journal, null, 2) + '\n',
      );
  }
  const byPolicy = policyRows(runs, names, p.seed);
  const rows = {
    policy: byPolicy,
    task: taskRows(runs),
    win_rate: winRateRows(runs, names),
    latency: latencyRows(runs, names),
    steps: runs.flatMap((r) => r.step_seconds.map((seconds) => ({ policy: r.policy, task: r.task_id, seconds }))),
  };
  await writeFile(join(out, 'rows.json'), JSON.stringify(rows, null, 2) + '\n');
  const usage = policies.flatMap((x) => (x.usage ? [x.usage()] : []));
  const metrics: Metrics = { tasks: new Set(runs.map((r) => r.task_id)).size, runs: runs.length };
  // One policy: its rates are the node's metrics (tables over ablation variants read them).
  if (names.length === 1) {
    for (const [k, v] of Object.entries(byPolicy[0])) if (k !== 'policy') metrics[k] = v;
  } else {
    for (const row of byPolicy) metrics[`any_medal:${row.policy}`] = row.any_medal;
  }
  const lat = rows.latency[rows.latency.length - 1];
  metrics.step_p50_s = lat.p50_s;
  metrics.steps = lat.steps;
  if (usage.length) {
    metrics.llm_requests = usage.reduce((n, u) => n + (u.requests ?? 0), 0);
    metrics.llm_cached = usage.reduce((n, u) => n + (u.cached ?? 0), 0);
    metrics.prompt_tokens = usage.reduce((n, u) => n + (u.prompt_tokens ?? 0), 0);
    metrics.completion_tokens = usage.reduce((n, u) => n + (u.completion_tokens ?? 0), 0);
  }
  return metrics;
}
