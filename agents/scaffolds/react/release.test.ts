// The released SandMLE reply format: written replies parse back to the action
// they were written from, and replies are read as the release's agent reads
// them (each expectation worked by hand from MultiTurnReactAgent._run).
import { parseReleaseOutput } from '../../../sandbox/release-output.js';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { parseReleaseReply, releaseObservation, releaseParser, releaseReply } from './release.js';
import { pyFloat, scoreAnswer, scoreRefusal, TOOL_JSON_ERROR } from './release-text.js';

const action = (text: string, id = 'task') => parseReleaseReply(text, id).action;

test('round trips: python, Score (default file and another), answer; Score carries the competition id', () => {
  const actions = [
    { kind: 'code' as const, code: 'import pandas as pd\nprint(pd.__version__)' },
    { kind: 'validate' as const, path: 'submission.csv' },
    { kind: 'validate' as const, path: 'other.csv' },
    { kind: 'answer' as const, path: 'submission.csv' },
  ];
  for (const a of actions) {
    const text = releaseReply('reason first', a, 'cactus');
    assert.ok(text.startsWith('<think>reason first</think>\n'), text);
    const r = parseReleaseReply(text, 'cactus');
    assert.equal(r.action, a, text);
    assert.ok(r.formatOk, text);
  }
  assert.is(
    releaseReply('x', { kind: 'validate', path: 'submission.csv' }, 'cactus'),
    '<think>x</think>\n<tool_call>\n{"name":"Score","arguments":{"competition_id":"cactus"}}\n</tool_call>',
  );
  assert.is(releaseObservation('exit 0'), '<tool_response>\nexit 0\n</tool_response>');
});

test('python: the last <code> block of the whole reply runs; an unclosed one runs to the end; no tags: the call text without the word python', () => {
  assert.equal(action('<think>t</think><tool_call>python<code>a = 1</code><code>print(a)</code></tool_call>'), {
    kind: 'code',
    code: 'print(a)',
  });
  // Two calls: the first is the call, but the code is the reply's last block.
  assert.equal(
    action(
      '<think>t</think><tool_call>python<code>x = 1</code></tool_call><tool_call>python<code>x = 2</code></tool_call>',
    ),
    { kind: 'code', code: 'x = 2' },
  );
  assert.equal(action('<think>t</think>\n<tool_call>\npython\n<code>\nprint(4)\n'), { kind: 'code', code: 'print(4)' });
  assert.equal(action('<think>t</think><tool_call>\npython\nprint(3)\n</tool_call>'), {
    kind: 'code',
    code: 'print(3)',
  });
  // "python" anywhere in the call makes it a python call: a JSON call to PythonInterpreter runs its own text.
  assert.equal(
    action('<think>t</think><tool_call>{"name": "PythonInterpreter", "arguments": {"code": "print(2)"}}</tool_call>'),
    { kind: 'code', code: '{"name": "PythonInterpreter", "arguments": {"code": "print(2)"}}' },
  );
  assert.equal(action('<think>t</think><tool_call>python<code>  </code></tool_call>'), { kind: 'code', code: '' });
});

test('JSON calls by json5: single quotes and trailing commas pass once json5 is loaded; Score needs competition_id, by exact name', () => {
  const id = 'cactus';
  assert.equal(
    action(`<think>t</think><tool_call>{"name": 'Score', "arguments": {'competition_id': 'cactus',},}</tool_call>`, id),
    { kind: 'validate', path: 'submission.csv' },
  );
  assert.equal(
    action(
      '<think>t</think><tool_call>{"name": "Score", "arguments": {"competition_id": "cactus", "path": "b.csv"}}</tool_call>',
      id,
    ),
    { kind: 'validate', path: 'b.csv' },
  );
  assert.equal(action('<think>t</think><tool_call>{"name": "Score", "arguments": {}}</tool_call>', id), {
    kind: 'invalid',
    reason: "Error calling tool Score: SynScoreTool.call() missing 1 required positional argument: 'competition_id'",
  });
  assert.match(
    (
      action(
        '<think>t</think><tool_call>{"name": "Score", "arguments": {"competition_id": "other"}}</tool_call>',
        id,
      ) as { reason: string }
    ).reason,
    /no competition "other" here/,
  );
  assert.equal(action('<think>t</think><tool_call>{"name": "SynScore", "arguments": {}}</tool_call>', id), {
    kind: 'invalid',
    reason: "Tool SynScore not found. Available tools: ['PythonInterpreter', 'Score']",
  });
  assert.equal(
    action('<think>t</think><tool_call>{"name": "Score", "arguments": {"competition_id": "cactus"</tool_call>', id),
    { kind: 'invalid', reason: TOOL_JSON_ERROR },
  );
});

test('json5 is loaded only by a reply that names no python and holds "name": — before that a JSON call is invalid JSON', () => {
  const parse = releaseParser('cactus');
  // Single-quoted keys only: json5 was never imported, the call fails.
  assert.equal(
    parse("<think>t</think><tool_call>{'name': 'Score', 'arguments': {'competition_id': 'cactus'}}</tool_call>").action,
    { kind: 'invalid', reason: TOOL_JSON_ERROR },
  );
  // Reasoning that mentions Python keeps json5 unloaded even for a well-formed call.
  assert.equal(
    parse(
      '<think>the python run worked</think><tool_call>{"name": "Score", "arguments": {"competition_id": "cactus"}}</tool_call>',
    ).action,
    { kind: 'invalid', reason: TOOL_JSON_ERROR },
  );
  assert.equal(
    parse('<think>grade it</think><tool_call>{"name": "Score", "arguments": {"competition_id": "cactus"}}</tool_call>')
      .action,
    { kind: 'validate', path: 'submission.csv' },
  );
  // Loaded once, it stays for the episode.
  assert.equal(
    parse(
      "<think>the python run worked</think><tool_call>{'name': 'Score', 'arguments': {'competition_id': 'cactus'}}</tool_call>",
    ).action,
    { kind: 'validate', path: 'submission.csv' },
  );
});

test('answers: the word names no file; with a call, the call runs and the episode ends; a reply with neither gets no tool response', () => {
  assert.equal(parseReleaseReply('<think>done</think>\n<answer>final.csv</answer>'), {
    action: { kind: 'answer', path: 'submission.csv' },
    toolCall: false,
    answers: true,
    formatOk: true,
  });
  const both = parseReleaseReply(
    '<think>t</think><tool_call>python<code>x=1</code></tool_call><answer>submission</answer>',
  );
  assert.equal([both.action.kind, both.toolCall, both.answers, both.formatOk], ['code', true, true, false]);
  const none = parseReleaseReply('<think>hmm</think> still thinking');
  assert.equal([none.action.kind, none.toolCall, none.formatOk], ['invalid', false, false]);
  // A hallucinated tool response is cut off before the reply is read.
  assert.equal(parseReleaseReply('<think>t</think><answer>s</answer>').action.kind, 'answer');
  assert.equal(
    parseReleaseReply('<think>t</think>hello<tool_response>x<answer>s</answer></tool_response>').action.kind,
    'invalid',
  );
});

test("the Score answer is the release's text, its JSON as json.dumps writes it", () => {
  const r = {
    score: 0.845,
    gold_threshold: 0.95,
    silver_threshold: 0.9,
    bronze_threshold: 0.85,
    median_threshold: 1,
    is_lower_better: false,
  };
  assert.is(
    scoreAnswer(r, 'submission.csv'),
    'Submission OK. But you do not reach the bronze threshold to get the medal. Please revise your Python code to improve your score. Details: {"score_primary (main competition metric for current code)": 0.845, "metric_lower_is_better (true means lower score is better)": false, "threshold_gold (score needed for gold tier)": 0.95, "threshold_silver (score needed for silver tier)": 0.9, "threshold_bronze (score needed for bronze tier)": 0.85, "threshold_median (median submission score)": 1.0, "submission_path": "submission.csv"}',
  );
  assert.match(
    scoreAnswer({ ...r, score: 0.97, gold_threshold: null }, 'submission.csv'),
    /^Submission OK\. Details: \{.*"threshold_gold \(score needed for gold tier\)": null/,
  );
  assert.equal([1, 0.5, 1e-5, 1.5e-7, 1e16, 123456.789, -2].map(pyFloat), [
    '1.0',
    '0.5',
    '1e-05',
    '1.5e-07',
    '1e+16',
    '123456.789',
    '-2.0',
  ]);
});

test("a release task's failed grading is refused in the evaluator's own words, stderr then stdout, as the release's Score tool says it", () => {
  const failed = parseReleaseOutput('checked 3 rows\n', 'Traceback (most recent call last):\nValueError: bad ids\n', 1);
  assert.ok(!failed.ok);
  const said = 'Traceback (most recent call last):\nValueError: bad ids\nchecked 3 rows';
  assert.equal(failed.ok ? null : [failed.error, failed.said], [
    'evaluator exited with status 1: checked 3 rows',
    said,
  ]);
  assert.is(
    scoreRefusal(failed.ok ? '' : failed.error, 'submission.csv', failed.ok ? undefined : failed.said),
    `Submission csv is invalid. Please revise your Python code to re-generate another submission.csv file. Detailed issue: ${said}`,
  );
  // A JSON answer without a score: the same refusal, with what the evaluator printed.
  const unscored = parseReleaseOutput('{"score": null}', '', 0);
  assert.equal(unscored.ok ? null : unscored.said, '{"score": null}');
});

test.run();
