// The ReAct reply format and the context budget, on written-out replies.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { approxTokens, fitContext } from './context.js';
import { parseReply } from './parse.js';
import { react } from './index.js';
import type { EpisodeContext, Validation } from '../types.js';
import type { Policy } from '../../policies/types.js';

test('one python block after the reasoning is an execution in format', () => {
  const r = parseReply('<think>look at the data</think>\n```python\nprint(1)\n```');
  assert.equal(r.action, { kind: 'code', code: 'print(1)\n' });
  assert.ok(r.formatOk);
});

test('answer and validate take a file name; missing reasoning is out of format but still acted on', () => {
  assert.equal(parseReply('<think>done</think><answer> submission.csv </answer>').action, {
    kind: 'answer',
    path: 'submission.csv',
  });
  assert.equal(parseReply('<think>check</think><validate>sub.csv</validate>').action, {
    kind: 'validate',
    path: 'sub.csv',
  });
  const noThink = parseReply('```python\nx = 1\n```');
  assert.is(noThink.action.kind, 'code');
  assert.not.ok(noThink.formatOk);
});

test('no action, two actions, or an empty answer are format errors', () => {
  assert.is(parseReply('<think>hmm</think> I will think more.').action.kind, 'invalid');
  const two = parseReply('<think>x</think>```python\na=1\n```\n<answer>submission.csv</answer>');
  assert.equal(two.action, { kind: 'invalid', reason: 'the reply holds 2 actions; give exactly one per turn' });
  assert.not.ok(two.formatOk);
  assert.is(parseReply('<think>x</think><answer></answer>').action.kind, 'invalid');
});

test('a python block inside the reasoning is not an action', () => {
  const r = parseReply('<think>maybe ```python\nbad()\n``` later</think>\n<answer>submission.csv</answer>');
  assert.equal(r.action, { kind: 'answer', path: 'submission.csv' });
});

const msg = (role: 'system' | 'user' | 'assistant', n: number, tag: string) => ({
  role,
  content: `${tag}:${'x'.repeat(n)}`,
});

test('over budget, failed turns go first (oldest first), then the oldest others; head and last turn stay', () => {
  const head = [msg('system', 40, 'sys'), msg('user', 40, 'task')];
  const turns = [0, 1, 2, 3].flatMap((i) => [msg('assistant', 400, `a${i}`), msg('user', 400, `o${i}`)]);
  const all = [...head, ...turns];
  const failed = [false, true, false, true];
  // Room for the head and about two turns.
  const budget = approxTokens([...head, ...turns.slice(0, 4)]) + 5;
  const fit = fitContext(all, 2, failed, budget);
  const tags = fit.messages.map((m) => m.content.split(':')[0]);
  // Both failed-or-old candidates: turn 1 (failed) goes before turn 0 and turn 2 (succeeded).
  assert.equal(tags, ['sys', 'task', 'a2', 'o2', 'a3', 'o3']);
  // Turn 1 (failed, oldest) is dropped first; turn 3 is the latest and stays even though it failed.
  assert.ok(!tags.includes('a1'));
  assert.ok(tags.includes('a3'));
  assert.equal(tags.slice(0, 2), ['sys', 'task']);
  assert.ok(approxTokens(fit.messages) <= budget);
  assert.is(fit.dropped, (all.length - fit.messages.length) / 2);
});

test('under budget nothing is dropped', () => {
  const all = [msg('system', 10, 's'), msg('user', 10, 't'), msg('assistant', 10, 'a'), msg('user', 10, 'o')];
  assert.equal(fitContext(all, 2, [true], 10_000), { messages: all, dropped: 0 });
});

/** A ReAct episode that only validates, then answers: no code runs, so no sandbox is needed. */
async function validateOnce(answer: Validation): Promise<string> {
  const texts = [
    '<think>check</think><validate>submission.csv</validate>',
    '<think>done</think><answer>submission.csv</answer>',
  ];
  const policy: Policy = {
    name: 'written',
    kind: 'scripted',
    act: async (req) => ({ text: texts[req.turn], usage: { prompt_tokens: 1, completion_tokens: 1 } }),
  };
  const ctx = {
    task: { id: 't', description: 'd', lowerIsBetter: false, meta: { id: 't' } },
    session: {},
    policy,
    sample: 0,
    limits: { maxTurns: 4, stepTimeoutMs: 1000, timeBudgetMs: 600_000, contextTokens: 32_768, observationChars: 2000 },
    aide: { numDrafts: 1, debugProb: 0, maxDebugDepth: 0 },
    validate: async () => answer,
    signal: new AbortController().signal,
    random: () => 0,
  } as unknown as EpisodeContext;
  const ep = await react.run(ctx);
  assert.equal(
    ep.turns.map((t) => t.action),
    ['validate', 'answer'],
  );
  return ep.turns[0].observation;
}

test('validate: the format only by default; the score and thresholds when the run shows them', async () => {
  // The grade a valid submission always carries (stages/eval/rollout.ts): shown only through feedback.
  const result = {
    score: 0.7,
    gold_threshold: 0.9,
    silver_threshold: 0.8,
    bronze_threshold: 0.6,
    median_threshold: 0.5,
    is_lower_better: false,
  };
  assert.is(
    await validateOnce({ ok: true, result }),
    "valid: submission.csv has the submission's format (it was not scored)",
  );
  assert.is(await validateOnce({ ok: true, feedback: 'scores 0.7', result }), 'valid: submission.csv scores 0.7');
  assert.is(await validateOnce({ ok: false, problem: 'missing ids' }), 'invalid submission: missing ids');
});

test.run();
