// Evaluation aggregates on runs with known answers.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { CATEGORY_OF } from '../../tools/index.js';
import { policyRows, winRateRows } from './aggregate.js';
import { gradingReport, mlebenchReport } from './grading.js';
import { latencyRows } from './latency.js';
import type { RunRecord } from './rows.js';
import { toolUseFields } from './tool-use.js';

function run(policy: string, task: string, repeat: number, over: Partial<RunRecord> = {}): RunRecord {
  return {
    task_id: task,
    policy,
    repeat,
    valid_submission: true,
    score: 0.5,
    gold_threshold: 0.9,
    silver_threshold: 0.8,
    bronze_threshold: 0.7,
    median_threshold: 0.5,
    above_median: false,
    gold_medal: false,
    silver_medal: false,
    bronze_medal: false,
    any_medal: false,
    is_lower_better: false,
    success: null,
    turns: 3,
    duration_s: 1,
    ended: 'answer',
    format: 1,
    reward: null,
    submission: 'submission.csv',
    grade_error: null,
    grade_status: 'graded',
    grader_fault: null,
    created_at: '2026-01-01T00:00:00.000Z',
    human_rank: null,
    step_seconds: [],
    ...over,
  };
}

test('rates are per-task means in percent; SEM is over repeats; bootstrap interval over tasks', () => {
  // Two tasks, two repeats. Repeat 0 medals on both tasks, repeat 1 on neither: rate 50%,
  // per-repeat rates 100 and 0, so SEM = sd([100, 0]) / sqrt(2) = 50.
  const runs = [
    run('p', 't1', 0, { any_medal: true }),
    run('p', 't2', 0, { any_medal: true }),
    run('p', 't1', 1),
    run('p', 't2', 1),
  ];
  const [row] = policyRows(runs, ['p'], 0);
  assert.is(row.any_medal, 50);
  assert.is(row.any_medal_sem, 50);
  // Every task's mean is 50, so every resample's mean is too.
  assert.is(row.any_medal_lo, 50);
  assert.is(row.any_medal_hi, 50);
  assert.is(row.valid_submission, 100);
  assert.is(row.tasks, 2);
  assert.is(row.runs, 4);
  // success is unknown (no starter baseline): no rate rather than 0.
  assert.is(row.success, null);
});

test('HumanRank in percent where tasks have a leaderboard, averaged per task then over tasks', () => {
  const runs = [
    run('p', 't1', 0, { human_rank: 0.5 }),
    run('p', 't1', 1, { human_rank: 1 }),
    run('p', 't2', 0, { human_rank: 0 }),
    run('p', 't3', 0),
  ];
  const [row] = policyRows(runs, ['p'], 0);
  // t1: 75, t2: 0 (t3 has no leaderboard).
  assert.is(row.human_rank, 37.5);
  assert.not.ok('human_rank' in policyRows([run('q', 't1', 0)], ['q'], 0)[0]);
});

test('the bootstrap interval spans the per-task spread', () => {
  const runs = Array.from({ length: 10 }, (_, i) => run('p', `t${i}`, 0, { any_medal: i < 5 }));
  const [row] = policyRows(runs, ['p'], 0);
  assert.is(row.any_medal, 50);
  assert.ok((row.any_medal_lo as number) < 50 && (row.any_medal_hi as number) > 50);
  assert.ok((row.any_medal_lo as number) >= 10 && (row.any_medal_hi as number) <= 90);
  assert.is(row.any_medal_sem, 0);
});

test('win rates compare mean scores on shared tasks; invalid loses; ties count half', () => {
  const runs = [
    run('a', 't1', 0, { score: 0.9 }),
    run('b', 't1', 0, { score: 0.8 }),
    run('a', 't2', 0, { score: 0.5 }),
    run('b', 't2', 0, { score: 0.5 }),
    run('a', 't3', 0, { score: null, valid_submission: false }),
    run('b', 't3', 0, { score: 0.1 }),
    // Lower is better here: b's smaller error wins.
    run('a', 't4', 0, { score: 3, is_lower_better: true }),
    run('b', 't4', 0, { score: 2, is_lower_better: true }),
  ];
  const [a, b] = winRateRows(runs, ['a', 'b']);
  assert.is(a.b, 37.5); // win, tie, loss, loss
  assert.is(b.a, 62.5);
  assert.is(a.a, null);
  assert.is(a.overall, 37.5);
});

test('latency quantiles of execution seconds', () => {
  const runs = [run('p', 't1', 0, { step_seconds: [1, 2, 3] }), run('p', 't2', 0, { step_seconds: [4, 5] })];
  assert.equal(latencyRows(runs, ['p']), [{ policy: 'p', steps: 5, mean_s: 3, p50_s: 3, p90_s: 4.6, max_s: 5 }]);
});

test('the grading report counts medals once per run (mutually exclusive)', () => {
  const runs = [
    run('p', 't1', 0, { gold_medal: true, any_medal: true, above_median: true }),
    run('p', 't2', 0, { valid_submission: false, score: null, submission: null, grade_error: 'no submission' }),
  ];
  const r = gradingReport(runs, ['p']).p as Record<string, unknown>;
  assert.equal(
    [
      r.total_runs,
      r.total_runs_with_submissions,
      r.total_valid_submissions,
      r.total_medals,
      r.total_gold_medals,
      r.total_silver_medals,
      r.total_above_median,
    ],
    [2, 1, 1, 1, 1, 0, 1],
  );
  assert.is((r.competition_reports as unknown[]).length, 2);
});

test("MLE-bench's own report: exactly its fields, floats and booleans never null", () => {
  const runs = [
    run('p', 't1', 0, { score: 0.95, gold_medal: true, any_medal: true, above_median: true }),
    run('p', 't2', 0, {
      valid_submission: false,
      score: null,
      submission: null,
      grade_error: 'no submission',
      is_lower_better: null,
      median_threshold: null,
    }),
  ];
  const r = mlebenchReport(runs) as { competition_reports: Array<Record<string, unknown>> } & Record<string, unknown>;
  assert.equal(Object.keys(r), [
    'total_runs',
    'total_runs_with_submissions',
    'total_valid_submissions',
    'total_medals',
    'total_gold_medals',
    'total_silver_medals',
    'total_bronze_medals',
    'total_above_median',
    'competition_reports',
  ]);
  assert.equal(
    [
      r.total_runs,
      r.total_runs_with_submissions,
      r.total_valid_submissions,
      r.total_medals,
      r.total_gold_medals,
      r.total_above_median,
    ],
    [2, 1, 1, 1, 1, 1],
  );
  const fields = [
    'competition_id',
    'score',
    'gold_threshold',
    'silver_threshold',
    'bronze_threshold',
    'median_threshold',
    'any_medal',
    'gold_medal',
    'silver_medal',
    'bronze_medal',
    'above_median',
    'submission_exists',
    'valid_submission',
    'is_lower_better',
    'created_at',
    'submission_path',
  ];
  for (const c of r.competition_reports) {
    assert.equal(Object.keys(c), fields);
    for (const k of fields.filter((f) => f !== 'score')) assert.ok(c[k] !== null, `${k} is null`);
  }
  const missing = r.competition_reports[1];
  assert.equal(
    [
      missing.score,
      missing.median_threshold,
      missing.is_lower_better,
      missing.submission_exists,
      missing.submission_path,
    ],
    [null, NaN, false, false, ''],
  );
});

test('tool use: calls and distinct tools per rollout, coverage as rollouts out of the first five per task', () => {
  const called = (tools: string[]) => ({ tools_called: tools });
  const runs = [
    // t1: six repeats; only the first five count for coverage, so the sixth's graph call does not.
    run('p', 't1', 0, called(['detect_missing_values', 'detect_missing_values', 'acf'])),
    run('p', 't1', 1, called(['detect_missing_values'])),
    run('p', 't1', 2, called([])),
    run('p', 't1', 3, called([])),
    run('p', 't1', 4, called(['acf'])),
    run('p', 't1', 5, called(['homophily_estimator'])),
    // t2: one repeat with a shared tool.
    run('p', 't2', 0, called(['verify_hyperparam_effective'])),
  ];
  const groups: Record<string, string> = {
    detect_missing_values: 'tabular',
    acf: 'time-series',
    homophily_estimator: 'graph',
    verify_hyperparam_effective: 'shared',
  };
  const row = toolUseFields(runs, (t) => groups[t], ['shared', 'tabular', 'time-series', 'graph']);
  // Calls 3+1+0+0+1+1+1 = 7 over 7 rollouts; distinct 2+1+0+0+1+1+1 = 6.
  assert.is(row.tool_calls, 1);
  assert.is(row.distinct_tools, Number((6 / 7).toFixed(2)));
  // Per task, then averaged: tabular t1 2, t2 0 -> 1; time series t1 2 -> 1; graph 0 (sixth repeat); shared t2 1 -> 0.5.
  assert.equal(
    [row.coverage_tabular, row.coverage_time_series, row.coverage_graph, row.coverage_shared],
    [1, 1, 0, 0.5],
  );
  // Runs without a tool record (other scaffolds) add no tool fields.
  assert.equal(
    toolUseFields([run('q', 't1', 0)], (t) => groups[t], ['shared']),
    {},
  );
  assert.not.ok('tool_calls' in policyRows([run('q', 't1', 0)], ['q'], 0)[0]);
  assert.is(policyRows(runs, ['p'], 0)[0].coverage_tabular, 1);
  // The paper's categories: data inspection (missing values, ACF) manages data; the shared hyperparameter check verifies.
  const cat = policyRows(runs, ['p'], 0)[0];
  assert.equal([cat.coverage_data_management, cat.coverage_verification], [(3 + 0) / 2, (0 + 1) / 2]);
});

test('every registered tool is in one of the two categories; the shared ones verify, data inspection manages data', () => {
  assert.is(CATEGORY_OF.size, 67);
  assert.ok([...CATEGORY_OF.values()].every((c) => c === 'data-management' || c === 'verification'));
  assert.is(CATEGORY_OF.get('validate_output_format'), 'verification');
  assert.is(CATEGORY_OF.get('plateau_detector'), 'verification');
  assert.is(CATEGORY_OF.get('detect_missing_values'), 'data-management');
  assert.is(CATEGORY_OF.get('homophily_estimator'), 'data-management');
});

test.run();
