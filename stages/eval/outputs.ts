// What an eval node leaves, from its runs' trajectories: trajectories.jsonl, results.jsonl, the two grading
// reports, AIDE's journals, rows.json for the tables, and the node's metrics. A run and a rescore write them
// the same way.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Policy } from '../../agents/policies/index.js';
import { TRAJECTORIES_FILE, writeTrajectories } from '../../agents/trajectory-files.js';
import type { Trajectory } from '../../agents/trajectory.js';
import { formatJson, writeJsonl } from '../../core/json-files.js';
import type { Metrics } from '../contract.js';
import { policyRows, taskRows, winRateRows } from './aggregate.js';
import { gradingReport, mlebenchReport } from './grading.js';
import { latencyRows } from './latency.js';
import type { Row, RunRecord } from './rows.js';
import { attainableMax, type TaskFacts } from './facts.js';
import { slug, type EvalParams } from './index.js';
import { runRecord } from './record.js';

// A score that is not finite stays a number in every file (core/json-files.ts), as MLE-bench's json.dump keeps it.
const pretty = (value: unknown) => formatJson(value, 2) + '\n';

/** The grading reports: ours, and MLE-bench's own, one per policy, field for field. */
async function writeReports(out: string, runs: readonly RunRecord[], names: readonly string[]): Promise<void> {
  await writeFile(join(out, 'grading_report.json'), pretty(gradingReport(runs, names)));
  await mkdir(join(out, 'mlebench'), { recursive: true });
  for (const name of names)
    await writeFile(
      join(out, 'mlebench', `${slug(name)}_grading_report.json`),
      pretty(mlebenchReport(runs.filter((r) => r.policy === name))),
    );
}

/** AIDE's search trees, one file per run that has one. */
async function writeJournals(out: string, trajectories: readonly Trajectory[]): Promise<void> {
  const journals = trajectories.filter((t) => t.journal);
  if (!journals.length) return;
  await mkdir(join(out, 'journals'), { recursive: true });
  for (const t of journals) {
    // The tree as mlepipe draws it, and beside it the same tree in aideml's own journal format.
    const { aide, ...tree } = t.journal as { aide?: unknown };
    const base = join(out, 'journals', `${slug(t.policy)}__${t.task_id}__r${t.sample}`);
    await writeFile(`${base}.json`, pretty(tree));
    if (aide) await writeFile(`${base}.aide.json`, JSON.stringify(aide));
  }
}

/**
 * The tables' rows: by policy (with the success rate the policy's tasks allow at best, where their builds
 * checked it), by task, win rates, latency, and every execution's seconds.
 */
function tableRows(runs: readonly RunRecord[], names: readonly string[], seed: number, facts: Map<string, TaskFacts>) {
  const cap = (row: Row): Row => {
    const max = attainableMax([...new Set(runs.filter((r) => r.policy === row.policy).map((r) => r.task_id))], facts);
    return max === undefined ? row : { ...row, attainable_max: max };
  };
  return {
    policy: policyRows(runs, names, seed).map(cap),
    task: taskRows(runs),
    win_rate: winRateRows(runs, names),
    latency: latencyRows(runs, names),
    steps: runs.flatMap((r) => r.step_seconds.map((seconds) => ({ policy: r.policy, task: r.task_id, seconds }))),
  };
}

/** The node's metrics: one policy's rates as they are (tables over ablation variants read them), the model use. */
function evalMetrics(runs: readonly RunRecord[], rows: ReturnType<typeof tableRows>, policies: Policy[]): Metrics {
  const metrics: Metrics = { tasks: new Set(runs.map((r) => r.task_id)).size, runs: runs.length };
  const byPolicy: Row[] = rows.policy;
  if (byPolicy.length === 1) {
    for (const [k, v] of Object.entries(byPolicy[0])) if (k !== 'policy') metrics[k] = v;
  } else {
    for (const row of byPolicy) metrics[`any_medal:${row.policy}`] = row.any_medal;
    // The tasks are every policy's: one ceiling for the node, beside the rates of its variant rows.
    if (byPolicy[0]?.attainable_max !== undefined) metrics.attainable_max = byPolicy[0].attainable_max;
  }
  const lat = rows.latency[rows.latency.length - 1];
  metrics.step_p50_s = lat.p50_s;
  metrics.steps = lat.steps;
  const usage = policies.flatMap((x) => (x.usage ? [x.usage()] : []));
  if (usage.length) {
    metrics.llm_requests = usage.reduce((n, u) => n + (u.requests ?? 0), 0);
    metrics.llm_cached = usage.reduce((n, u) => n + (u.cached ?? 0), 0);
    metrics.prompt_tokens = usage.reduce((n, u) => n + (u.prompt_tokens ?? 0), 0);
    metrics.completion_tokens = usage.reduce((n, u) => n + (u.completion_tokens ?? 0), 0);
  }
  return metrics;
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
  await writeTrajectories(join(out, TRAJECTORIES_FILE), trajectories);
  await writeJsonl(join(out, 'results.jsonl'), runs);
  await writeReports(out, runs, names);
  await writeJournals(out, trajectories);
  const rows = tableRows(runs, names, p.seed, facts);
  await writeFile(join(out, 'rows.json'), pretty(rows));
  return evalMetrics(runs, rows, policies);
}
