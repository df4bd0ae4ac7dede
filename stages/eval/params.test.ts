// The eval stage's limit presets and the score feedback of validate.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { episodeLimits } from './index.js';
import { scoreFeedback } from './rollout.js';

test('limits: paper by default, release as the released code; a written value wins', () => {
  assert.equal(episodeLimits({ limits: 'paper' }), { max_turns: 20, step_timeout: 90, time_budget: 1800 });
  assert.equal(episodeLimits({ limits: 'release' }), { max_turns: 15, step_timeout: 300, time_budget: 1200 });
  assert.equal(episodeLimits({ limits: 'release', max_turns: 30 }), { max_turns: 30, step_timeout: 300, time_budget: 1200 });
});

test('score feedback names the score, the direction and the four thresholds', () => {
  const r = { score: 0.123456789, gold_threshold: 0.9, silver_threshold: 0.8, bronze_threshold: 0.7, median_threshold: null, is_lower_better: false };
  assert.is(scoreFeedback(r), 'scores 0.123457 (higher is better); thresholds: gold 0.9, silver 0.8, bronze 0.7, median none');
});

test.run();
