// The eval stage's limit presets and the score feedback of validate.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { evalStage, type EvalParams } from './index.js';
import { episodeLimits } from './limits.js';
import { scoreFeedback } from '../shared/episode.js';

test('limits: paper by default, release as the released code; a written value wins', () => {
  assert.equal(episodeLimits({ limits: 'paper' }), { max_turns: 20, step_timeout: 90, time_budget: 1800 });
  assert.equal(episodeLimits({ limits: 'release' }), { max_turns: 15, step_timeout: 300, time_budget: 1200 });
  assert.equal(episodeLimits({ limits: 'release', max_turns: 30 }), {
    max_turns: 30,
    step_timeout: 300,
    time_budget: 1200,
  });
});

test("mlab: paper limits are MLToolBench's 50 actions and one hour; other presets and written values as for the rest", () => {
  assert.equal(episodeLimits({ limits: 'paper', scaffold: 'mlab' }), {
    max_turns: 50,
    step_timeout: 3600,
    time_budget: 3600,
  });
  assert.equal(episodeLimits({ limits: 'paper', scaffold: 'mlab', max_turns: 8, time_budget: 600 }), {
    max_turns: 8,
    step_timeout: 3600,
    time_budget: 600,
  });
  assert.equal(episodeLimits({ limits: 'release', scaffold: 'mlab' }), {
    max_turns: 15,
    step_timeout: 300,
    time_budget: 1200,
  });
});

test("an eval of MLE-bench competitions runs each episode up to MLE-bench's 24 hours unless it writes time_budget; other tasks keep the preset's", () => {
  const p = { split: 'all', repeats: 1, policy: 'scripted:forest', limits: 'paper' } as const;
  const resolve = evalStage.resolve!;
  assert.is(episodeLimits(resolve(p, { inputKinds: ['mlebench'] }) as never).time_budget, 86400);
  assert.is(episodeLimits(resolve({ ...p, time_budget: 600 }, { inputKinds: ['mlebench'] }) as never).time_budget, 600);
  assert.is(episodeLimits(resolve(p, { inputKinds: ['filter'] }) as never).time_budget, 1800);
  // The written params stay as they were: the default is the resolved node's.
  assert.equal(resolve(p, { inputKinds: ['filter'] }), p);
});

test('tools: and tool_dropout belong to mlab; named tools must exist', () => {
  const check = (p: Partial<EvalParams>) =>
    evalStage.check!(
      { split: 'all', repeats: 1, policy: 'scripted:forest', ...p } as EvalParams,
      { experimentDir: '.', models: {} } as never,
    ).map((i) => [i.param, i.message]);
  assert.equal(check({ scaffold: 'mlab', tools: 'tabular', tool_dropout: 0.2 }), []);
  assert.equal(check({ scaffold: 'react', tool_dropout: 0.2 }), [
    [['tool_dropout'], 'tool_dropout: only the mlab scaffold offers tools (scaffold: react)'],
  ]);
  assert.equal(check({ scaffold: 'mlab', tools: ['acf', 'no_such_tool'] }), [
    [['tools', 1], 'unknown tool "no_such_tool" (mlepipe tools list shows them)'],
  ]);
});

test('prompt_format belongs to react', () => {
  const check = (p: Partial<EvalParams>) =>
    evalStage.check!(
      { split: 'all', repeats: 1, policy: 'scripted:forest', ...p } as EvalParams,
      { experimentDir: '.', models: {} } as never,
    ).map((i) => [i.param, i.message]);
  assert.equal(check({ scaffold: 'react', prompt_format: 'sandmle-release' }), []);
  assert.equal(check({ scaffold: 'aide', prompt_format: 'sandmle-release' }), [
    [['prompt_format'], 'prompt_format: only the react scaffold has reply formats (scaffold: aide)'],
  ]);
});

test('action_model: mlab only (its AI actions ask it)', () => {
  const check = (p: Partial<EvalParams>) =>
    evalStage.check!(
      { split: 'all', repeats: 1, policy: 'scripted:forest', ...p } as EvalParams,
      { experimentDir: '.', models: {} } as never,
    ).map((i) => [i.param, i.message]);
  assert.equal(check({ scaffold: 'mlab', action_model: 'editor' }), []);
  assert.equal(check({ scaffold: 'react', action_model: 'editor' }), [
    [['action_model'], 'action_model: only the mlab scaffold has AI actions (scaffold: react)'],
  ]);
});

test('intervention: mlab only, its tools must exist, none of it with tools: none', () => {
  const check = (p: Partial<EvalParams>) =>
    evalStage.check!(
      { split: 'all', repeats: 1, policy: 'scripted:forest', ...p } as EvalParams,
      { experimentDir: '.', models: {} } as never,
    ).map((i) => [i.param, i.message]);
  assert.equal(check({ scaffold: 'mlab', intervention: { mode: 'mask', tools: ['detect_missing_values'] } }), []);
  assert.equal(check({ scaffold: 'react', intervention: { mode: 'mask', tools: 'all' } }), [
    [['intervention'], 'intervention: only the mlab scaffold offers tools (scaffold: react)'],
  ]);
  assert.equal(check({ scaffold: 'mlab', intervention: { mode: 'mask', tools: ['acf', 'nope'] } }), [
    [['intervention', 'tools', 1], 'unknown tool "nope" (mlepipe tools list shows them)'],
  ]);
  assert.equal(check({ scaffold: 'mlab', tools: 'none', intervention: { mode: 'none', tools: 'all' } }), []);
  assert.equal(
    check({ scaffold: 'mlab', tools: 'none', intervention: { mode: 'paraphrase', tools: 'all' } }).map((x) => x[0]),
    [['intervention']],
  );
});

test('score feedback names the score, the direction and the four thresholds', () => {
  const r = {
    score: 0.123456789,
    gold_threshold: 0.9,
    silver_threshold: 0.8,
    bronze_threshold: 0.7,
    median_threshold: null,
    is_lower_better: false,
  };
  assert.is(
    scoreFeedback(r),
    'scores 0.123457 (higher is better); thresholds: gold 0.9, silver 0.8, bronze 0.7, median none',
  );
});

test('an aide preset sets the limits; written values win; another scaffold ignores it', () => {
  assert.equal(episodeLimits({ limits: 'paper', scaffold: 'aide', aide: { preset: 'aideml' } }), {
    max_turns: 20,
    step_timeout: 3600,
    time_budget: 72000,
  });
  assert.equal(episodeLimits({ limits: 'paper', scaffold: 'aide', aide: { preset: 'mledojo' }, max_turns: 4 }), {
    max_turns: 4,
    step_timeout: 10000,
    time_budget: 10000,
  });
  assert.is(episodeLimits({ limits: 'paper', scaffold: 'react', aide: { preset: 'aideml' } }).max_turns, 20);
});

test.run();
