// Reward variables from recorded trajectories, and MLToolBench's success (Eq. 5).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { evaluate, parseFormula } from '../core/rewards/parse.js';
import { REWARD_PRESETS } from '../core/rewards/presets.js';
import type { EpisodeResult, TurnRecord } from './scaffolds/types.js';
import { medalReport } from '../tasks/medals.js';
import { rewardVariables, success } from './trajectory.js';

const turn = (over: Partial<TurnRecord>): TurnRecord => ({
  turn: 0,
  action: 'code',
  observation: '',
  exit_code: 0,
  timed_out: false,
  duration_ms: 10,
  format_ok: true,
  ...over,
});
const episode = (turns: TurnRecord[], ended: EpisodeResult['ended'] = 'answer'): EpisodeResult => ({
  scaffold: 'react',
  messages: [],
  turns,
  submission: 'submission.csv',
  ended,
  dropped_turns: 0,
  usage: { prompt_tokens: 0, completion_tokens: 0, requests: 0, cached: 0 },
});
const graded = (score: number) => ({
  score,
  gold_threshold: 0.9,
  silver_threshold: 0.8,
  bronze_threshold: 0.7,
  median_threshold: 0.5,
  is_lower_better: false,
});
const reward = (preset: string, vars: Record<string, number>) => evaluate(parseFormula(REWARD_PRESETS[preset]), vars);

test('valid, above median, below bronze, format 1.0: the paper reward is 0.5', () => {
  const v = rewardVariables(episode([turn({}), turn({ action: 'answer' })]), graded(0.6), null);
  assert.equal([v.format, v.execute, v.median, v.bronze, v.silver, v.gold], [1, 1, 1, 0, 0, 0]);
  assert.ok(Math.abs(reward('sandmle-paper', v) - 0.5) < 1e-12);
});

test('a score equal to the median meets the milestone: the paper reward is 0.5; above_median stays false', () => {
  const v = rewardVariables(episode([turn({}), turn({ action: 'answer' })]), graded(0.5), null);
  assert.equal([v.format, v.execute, v.median, v.bronze], [1, 1, 1, 0]);
  assert.ok(Math.abs(reward('sandmle-paper', v) - 0.5) < 1e-12);
  // Lower is better: meeting the median from below counts the same way.
  const lower = rewardVariables(
    episode([turn({})]),
    {
      ...graded(4),
      median_threshold: 4,
      bronze_threshold: 3,
      silver_threshold: 2,
      gold_threshold: 1,
      is_lower_better: true,
    },
    null,
  );
  assert.is(lower.median, 1);
  assert.is(medalReport(graded(0.5)).above_median, false);
});

test('milestones are cumulative: a silver also counts as bronze and median', () => {
  const v = rewardVariables(episode([turn({})]), graded(0.85), null);
  assert.equal([v.median, v.bronze, v.silver, v.gold], [1, 1, 1, 0]);
  assert.ok(Math.abs(reward('sandmle-paper', v) - (0.1 + 0.3 + 0.1 + 0.2 + 0.2)) < 1e-12);
  // The released code's reward takes the best milestone only.
  assert.ok(Math.abs(reward('sandmle-code', v) - (0.1 + 0.2 + 0.6)) < 1e-12);
});

test('format is the share of replies in format; no submission scores nothing', () => {
  const v = rewardVariables(
    episode(
      [turn({ format_ok: false }), turn({}), turn({}), turn({ format_ok: false, action: 'invalid' })],
      'max_turns',
    ),
    null,
    0.4,
  );
  assert.is(v.format, 0.5);
  assert.equal([v.execute, v.median, v.gold, v.success, v.improvement], [0, 0, 0, 0, 0]);
  assert.is(v.turns, 4);
  assert.ok(Math.abs(reward('sandmle-paper', v) - 0.05) < 1e-12);
});

test('timed_out: the time budget ran out, or the last execution was killed', () => {
  assert.is(rewardVariables(episode([turn({})], 'time_budget'), null, null).timed_out, 1);
  assert.is(
    rewardVariables(episode([turn({ timed_out: true, exit_code: null })], 'max_turns'), null, null).timed_out,
    1,
  );
  assert.is(
    rewardVariables(episode([turn({ timed_out: true, exit_code: null }), turn({})], 'max_turns'), null, null).timed_out,
    0,
  );
});

test('Eq. 5: success needs a gain over the starter above max(0.1|b|, 0.01) in the metric direction', () => {
  assert.is(success(0.56, 0.5, false), true); // gain 0.06 > 0.05
  assert.is(success(0.549, 0.5, false), false); // gain 0.049 is not above 0.05
  assert.is(success(0.015, 0.0, false), true); // floor 0.01
  assert.is(success(8.9, 10, true), true); // error down by 1.1 > 1.0
  assert.is(success(9.5, 10, true), false);
  assert.is(success(null, 0.5, false), false);
  assert.is(success(0.9, null, false), null);
  const v = rewardVariables(episode([turn({})]), graded(0.6), 0.5);
  assert.ok(Math.abs(v.improvement - 0.1) < 1e-12);
  assert.is(v.success, 1);
});

test.run();
