// The released SandMLE reply format: written replies parse back to the action
// they were written from, and the released code's variants are read as it
// reads them.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { parseReleaseReply, releaseObservation, releaseReply } from './release.js';

test('round trips: python, Score (default file and another), answer', () => {
  const actions = [
    { kind: 'code' as const, code: 'import pandas as pd\nprint(pd.__version__)\n' },
    { kind: 'validate' as const, path: 'submission.csv' },
    { kind: 'validate' as const, path: 'other.csv' },
    { kind: 'answer' as const, path: 'submission.csv' },
  ];
  for (const a of actions) {
    const text = releaseReply('reason first', a);
    assert.ok(text.startsWith('<think>reason first</think>\n'), text);
    assert.equal(parseReleaseReply(text), { action: a, formatOk: true }, text);
  }
  assert.is(releaseReply('x', { kind: 'validate', path: 'submission.csv' }), '<think>x</think>\n<tool_call>\n{"name":"Score","arguments":{}}\n</tool_call>');
  assert.is(releaseObservation('exit 0'), '<tool_response>\nexit 0\n</tool_response>');
});

test('python calls as the release reads them: named by JSON, with the code as an argument, without <code> tags', () => {
  const named = parseReleaseReply('<think>t</think><tool_call>{"name": "PythonInterpreter", "arguments": {}}\n<code>\nprint(1)\n</code></tool_call>');
  assert.equal(named.action, { kind: 'code', code: 'print(1)\n' });
  const arg = parseReleaseReply('<think>t</think><tool_call>{"name": "python", "arguments": {"code": "print(2)"}}</tool_call>');
  assert.equal(arg.action, { kind: 'code', code: 'print(2)' });
  const bare = parseReleaseReply('<think>t</think><tool_call>\npython\nprint(3)\n</tool_call>');
  assert.equal(bare.action, { kind: 'code', code: 'print(3)' });
  // A reply cut before </tool_call> and </code> (a stop word) still runs its code.
  const cut = parseReleaseReply('<think>t</think>\n<tool_call>\npython\n<code>\nprint(4)\n');
  assert.equal(cut.action, { kind: 'code', code: 'print(4)\n' });
  // Two <code> blocks in one call are joined.
  assert.equal(parseReleaseReply('<think>t</think><tool_call>python<code>a = 1</code><code>print(a)</code></tool_call>').action, { kind: 'code', code: 'a = 1\nprint(a)' });
});

test('Score by either released name, with its competition_id ignored; answer words name no file', () => {
  assert.equal(parseReleaseReply('<think>t</think><tool_call>{"name": "Score", "arguments": {"competition_id": "x"}}</tool_call>').action, { kind: 'validate', path: 'submission.csv' });
  assert.equal(parseReleaseReply('<think>t</think><tool_call>{"name": "SynScore", "arguments": {"path": "b.csv"}}</tool_call>').action, { kind: 'validate', path: 'b.csv' });
  assert.equal(parseReleaseReply('<think>done</think>\n<answer>submission</answer>').action, { kind: 'answer', path: 'submission.csv' });
  assert.equal(parseReleaseReply('<think>done</think>\n<answer>final.csv</answer>').action, { kind: 'answer', path: 'final.csv' });
});

test('format errors: no action, two actions, bad JSON, unknown tool, empty code; the tag inside reasoning is not an action', () => {
  const none = parseReleaseReply('<think>hmm</think> still thinking');
  assert.is(none.action.kind, 'invalid');
  assert.not.ok(none.formatOk);
  const two = parseReleaseReply('<think>t</think><tool_call>python<code>x=1</code></tool_call><answer>submission</answer>');
  assert.equal(two.action, { kind: 'invalid', reason: 'the reply holds 2 actions; give exactly one <tool_call> or <answer> per turn' });
  assert.match((parseReleaseReply('<think>t</think><tool_call>{name: Score}</tool_call>').action as { reason: string }).reason, /not valid JSON/);
  assert.match((parseReleaseReply('<think>t</think><tool_call>{"name": "Search", "arguments": {}}</tool_call>').action as { reason: string }).reason, /unknown tool "Search"/);
  assert.is(parseReleaseReply('<think>t</think><tool_call>python<code>  </code></tool_call>').action.kind, 'invalid');
  const inside = parseReleaseReply('<think>maybe <tool_call>python<code>bad()</code></tool_call> later</think>\n<answer>submission</answer>');
  assert.equal(inside.action, { kind: 'answer', path: 'submission.csv' });
});

test('the reasoning must come first: an action before <think>, or none at all, is acted on but out of format', () => {
  const late = parseReleaseReply('<tool_call>python<code>print(1)</code></tool_call>\n<think>why</think>');
  assert.is(late.action.kind, 'code');
  assert.not.ok(late.formatOk);
  const bare = parseReleaseReply('<tool_call>python<code>print(1)</code></tool_call>');
  assert.is(bare.action.kind, 'code');
  assert.not.ok(bare.formatOk);
});

test.run();
