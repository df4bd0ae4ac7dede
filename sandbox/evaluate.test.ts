// How an evaluator's printed answer becomes a grade (both graders read it this way).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { parseEvaluatorOutput } from './evaluate.js';

const answer = {
  score: 0.7,
  gold_threshold: 0.9,
  silver_threshold: 0.8,
  bronze_threshold: 0.6,
  median_threshold: 0.5,
  is_lower_better: false,
};

test('logs before an indented JSON object; the last object wins', () => {
  const out = `loading answer.csv\n{"note": "an earlier object"}\nscoring\n${JSON.stringify(answer, null, 4)}\n`;
  assert.equal(parseEvaluatorOutput(out, '', 0), { ok: true, result: answer });
  assert.equal(parseEvaluatorOutput(JSON.stringify(answer), '', 0), { ok: true, result: answer });
  // Log lines after the object, and an object whose lines inside end in braces.
  const nested = { ...answer, extra: { a: 1 } };
  const g = parseEvaluatorOutput(`${JSON.stringify(nested, null, 2)}\ndone in 0.3 s {ok}\n`, '', 0);
  assert.ok(g.ok && g.result.score === 0.7);
});

test('a score JSON cannot hold comes as the text inf, -inf or nan; other text is no score', () => {
  for (const [text, want] of [
    ['inf', Infinity],
    ['-inf', -Infinity],
    ['nan', NaN],
  ] as const) {
    const g = parseEvaluatorOutput(JSON.stringify({ ...answer, score: text }), '', 0);
    assert.ok(g.ok && Object.is(g.result.score, want), text);
  }
  assert.not.ok(parseEvaluatorOutput(JSON.stringify({ ...answer, score: '0.7' }), '', 0).ok);
});

test('is_lower_better as a string or an integer; null thresholds kept', () => {
  for (const [v, want] of [
    ['True', true],
    ['false', false],
    [1, true],
    [0, false],
    ['1', true],
    ['yes', true],
    ['No', false],
  ] as const) {
    const g = parseEvaluatorOutput(JSON.stringify({ ...answer, is_lower_better: v }), '', 0);
    assert.ok(g.ok && g.result.is_lower_better === want, `${v}`);
  }
  const g = parseEvaluatorOutput(JSON.stringify({ ...answer, gold_threshold: null, median_threshold: null }), '', 0);
  assert.ok(g.ok);
  assert.is(g.ok && g.result.gold_threshold, null);
  const bad = parseEvaluatorOutput(JSON.stringify({ ...answer, is_lower_better: 'maybe' }), '', 0);
  assert.ok(!bad.ok && bad.error.includes('is_lower_better'));
  assert.not.ok(parseEvaluatorOutput(JSON.stringify({ ...answer, silver_threshold: '0.8' }), '', 0).ok);
});

test('a non-zero exit is no grade, even with a score printed', () => {
  const g = parseEvaluatorOutput(JSON.stringify(answer), 'Traceback ...\nValueError: bad ids', 1);
  assert.equal(g, { ok: false, error: 'evaluator exited with status 1: ValueError: bad ids' });
  assert.equal(parseEvaluatorOutput('{"error": "missing ids"}', '', 0), { ok: false, error: 'missing ids' });
  assert.equal(parseEvaluatorOutput('nothing here', 'oops', 0), {
    ok: false,
    error: 'evaluator printed no JSON object: oops',
  });
});

test.run();
