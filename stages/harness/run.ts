// The harness stage's run(): the competitions laid out once for the harness, then for each policy (served for
// the node when mlepipe serves it) every competition × repeat run by the adapter, at most `concurrency` at a
// time, each under its time limit and the node's; each run's submission graded with the task's MLE-bench
// grader. A run that fails is recorded with its reason; the node fails only when nothing ran or mlepipe's own
// grader failed. Each finished run is kept as an item (item.ts): a node started again runs only the missing ones,
// and serves a policy only when one of its runs is missing.
import { existsSync } from 'node:fs';
import { copyFile, mkdir, readFile, writeFile } from 'node:fs/promises';
import { basename, dirname, join, relative } from 'node:path';
import { InternalError, StageFailure } from '../../core/errors.js';
import { mapLimit } from '../../core/pool.js';
import { gradeSubmission, type Grade } from '../../sandbox/evaluate.js';
import type { StageContext, StageResult } from '../contract.js';
import { announceKept } from '../shared/resume.js';
import { listTasks, type TaskRef } from '../shared/tasks.js';
import { serveForSampling } from '../shared/worker.js';
import type { HarnessAdapter, HarnessCompetition, HarnessRun, PolicyEndpoint } from './adapter.js';
import { getHarness } from './adapters.js';
import { harnessSettings, type HarnessParams } from './index.js';
import { runItem } from './item.js';
import { graceS, runHarnessProcess } from './process.js';
import { notRun, runRecord, tables, type RunRecord } from './records.js';
import { readTaskLeaderboard } from '../../tasks/leaderboard.js';

/** A task folder of the mlebench stage as the competition an adapter lays out. */
async function competitionOf(t: TaskRef): Promise<HarnessCompetition> {
  const grader = JSON.parse(await readFile(join(t.dir, 'private', 'mlebench.json'), 'utf8').catch(() => '{}')) as {
    mlebench_root?: string;
  };
  return {
    id: t.id,
    taskDir: t.dir,
    publicDir: join(t.dir, 'public'),
    privateDir: join(t.dir, 'private', 'answers'),
    mlebenchRoot: grader.mlebench_root,
  };
}

interface Job {
  competition: HarnessCompetition;
  repeat: number;
}

const runId = (j: Job, policy: string) => `${j.competition.id}/${policy.replace(/[^A-Za-z0-9._-]/g, '_')}/${j.repeat}`;

async function oneRun(
  ctx: StageContext<HarnessParams>,
  adapter: HarnessAdapter,
  base: Omit<HarnessRun, 'id' | 'competition' | 'repeat' | 'seed' | 'dir'>,
  job: Job,
): Promise<RunRecord> {
  const id = runId(job, base.policy.name);
  const seed = job.repeat + 1;
  const run: HarnessRun = {
    ...base,
    id,
    competition: job.competition,
    repeat: job.repeat,
    seed,
    dir: join(ctx.outDir, 'runs', id),
  };
  await mkdir(run.dir, { recursive: true });
  const started = Date.now();
  const limit = run.settings.timePerRunS;
  const cmd = await adapter.prepare(run);
  const exit = await runHarnessProcess(cmd, {
    timeoutMs: (limit + graceS(limit)) * 1000,
    signal: ctx.signal,
    log: join(run.dir, 'harness.log'),
  });
  ctx.signal.throwIfAborted();
  const outcome = await adapter.collect(run, exit);
  ctx.signal.throwIfAborted();
  let grade: Grade | null = null;
  let submission: string | null = null;
  if (outcome.submission && existsSync(outcome.submission)) {
    // The graded file is kept beside the run's outputs, whatever the harness does with its own afterwards.
    const kept = join(run.dir, 'submission.csv');
    if (outcome.submission !== kept) await copyFile(outcome.submission, kept);
    submission = relative(ctx.outDir, kept);
    // MLE-Dojo's grade (its scorer, its HumanRank) comes with the outcome.
    if (adapter.grader === 'mlebench')
      grade = await gradeSubmission(
        job.competition.taskDir,
        dirname(kept),
        { python: ctx.python, signal: ctx.signal },
        basename(kept),
      );
  }
  const rec = runRecord({
    task_id: job.competition.id,
    policy: base.policy.name,
    repeat: job.repeat,
    seed,
    duration_s: (Date.now() - started) / 1000,
    outcome,
    submission,
    journal: outcome.journal ? join('runs', id, outcome.journal) : null,
    grade,
    leaderboard: await readTaskLeaderboard(job.competition.taskDir),
  });
  ctx.log(
    `${id}: ${rec.failure ?? 'finished'}; ${rec.grade_status}${rec.score === null ? '' : `, score ${rec.score}`}`,
  );
  return rec;
}

/** The policy as an endpoint the harness is pointed at. */
function endpoint(name: string, spec: { base_url?: string; model: string; api_key_env?: string }): PolicyEndpoint {
  if (!spec.base_url) throw new InternalError(`model ${name} has no base_url once served`);
  const apiKey = spec.api_key_env ? process.env[spec.api_key_env] : undefined;
  return { name, baseUrl: spec.base_url, model: spec.model, ...(apiKey ? { apiKey } : {}) };
}

export async function run(ctx: StageContext<HarnessParams>): Promise<StageResult> {
  const p = ctx.params;
  const adapter = getHarness(p.harness);
  if (!adapter) throw new InternalError(`harness ${p.harness} passed validation without an adapter`);
  const settings = harnessSettings(p, ctx.experimentDir);
  const tasks = await listTasks({ split: 'all', limit: p.limit, inputs: ctx.inputs, experimentDir: ctx.experimentDir });
  if (!tasks.length) throw new StageFailure('no MLE-bench tasks in the inputs (needs: an mlebench stage)');
  const competitions = await Promise.all(tasks.map(competitionOf));
  await mkdir(join(ctx.outDir, 'layout'));
  const layout = await adapter.layout(competitions, join(ctx.outDir, 'layout'), settings);
  const jobs = competitions.flatMap((competition) =>
    Array.from({ length: p.repeats }, (_, repeat) => ({ competition, repeat })),
  );
  const deadline = p.total_s === undefined ? Infinity : Date.now() + p.total_s * 1000;
  const total = jobs.length * p.policies.length;
  const records: RunRecord[] = [];
  await announceKept(
    ctx,
    p.policies.flatMap((policy) => jobs.map((j) => runId(j, policy))),
    'runs',
  );
  ctx.progress({ done: 0, total, unit: 'runs' });
  for (const policy of p.policies) {
    // Served when a run needs it: a policy whose runs were all kept is not started again.
    let served: ReturnType<typeof serveForSampling> | undefined;
    const base = async () => {
      const spec = (await (served ??= serveForSampling(ctx, policy))).spec;
      return { policy: endpoint(policy, spec), layout, settings, signal: ctx.signal };
    };
    try {
      const done = await mapLimit(
        jobs,
        p.concurrency,
        async (job) => {
          const id = runId(job, policy);
          const rec =
            Date.now() >= deadline && !(await ctx.items.get(id))
              ? notRun(
                  job.competition.id,
                  policy,
                  job.repeat,
                  job.repeat + 1,
                  `the node's total time (${p.total_s}s) ran out before it started`,
                )
              : await runItem(ctx, id, join(ctx.outDir, 'runs', id), async () =>
                  oneRun(ctx, adapter, await base(), job),
                );
          records.push(rec);
          ctx.progress({ done: records.length, total, unit: 'runs' });
          return rec;
        },
        ctx.signal,
      );
      ctx.signal.throwIfAborted();
      if (done.some((r) => !r)) throw new InternalError('a harness run left no record');
    } finally {
      if (served)
        await served.then(
          (s) => s.stop(),
          () => undefined,
        );
    }
  }
  return finish(ctx, records, p.policies);
}

/** results.jsonl, rows.json and the metrics; a grader that failed fails the node, naming the runs. */
async function finish(ctx: StageContext<HarnessParams>, records: RunRecord[], policies: readonly string[]) {
  const order = (r: RunRecord) => `${policies.indexOf(r.policy)}\0${r.task_id}\0${String(r.repeat).padStart(6, '0')}`;
  records.sort((a, b) => (order(a) < order(b) ? -1 : 1));
  await writeFile(join(ctx.outDir, 'results.jsonl'), records.map((r) => JSON.stringify(r)).join('\n') + '\n');
  const rows = tables(records, policies);
  await writeFile(join(ctx.outDir, 'rows.json'), JSON.stringify(rows, null, 2) + '\n');
  const faults = records.filter((r) => r.grade_status === 'grade_error');
  if (faults.length)
    throw new StageFailure(
      `MLE-bench's grader failed on ${faults.length} submission(s): ${faults.map((r) => `${r.task_id}/${r.policy}/${r.repeat}: ${r.grade_error}`).join('; ')}`,
    );
  const first = rows.policy[0] as Record<string, number | null>;
  return {
    metrics: {
      runs: records.length,
      failed: records.filter((r) => r.status === 'failed').length,
      not_run: records.filter((r) => r.status === 'not_run').length,
      submissions: records.filter((r) => r.submission).length,
      valid_submission: first.valid_submission ?? null,
      any_medal: first.any_medal ?? null,
    },
  };
}
