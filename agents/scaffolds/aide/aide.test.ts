// AIDE's rules in mlepipe's search: the review decides bug and metric, replies' blocks are merged and asked for
// again, the debug-depth bound is AIDE's, the presets carry each upstream's numbers, the journal is aideml's.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { Policy, PolicyRequest } from '../../policies/types.js';
import type { EpisodeContext } from '../types.js';
import { askCode, extractCode, planText } from './code.js';
import { aideJournal } from './journal.js';
import { AIDE_PRESETS, aideOptions } from './presets.js';
import { parseReview, reviewTool, verdict } from './review.js';
import { best, depthOf, memory, nextStep, type JournalNode } from './search.js';
import { duration } from './time.js';

function node(id: number, over: Partial<JournalNode> = {}): JournalNode {
  return {
    id,
    parent: null,
    operator: 'draft',
    plan: `plan ${id}`,
    code: 'print(1)\n',
    exit_code: 0,
    timed_out: false,
    duration_ms: 10,
    metric: 0.5,
    lower_is_better: false,
    buggy: false,
    analysis: `found ${id}`,
    debug_depth: 0,
    observation: 'exit code 0',
    format_ok: true,
    retries: 0,
    submission: true,
    at_ms: id * 1000,
    ...over,
  };
}

/** Draws handed out in order, counted. */
function draws(...xs: number[]) {
  const f = () => {
    f.used++;
    return xs.shift() ?? 0.99;
  };
  f.used = 0;
  return f;
}

const RUN_OK = { exit_code: 0, timed_out: false, lower_is_better: false };
const AIDEML = { valid: true, reviewDirection: true };

test('a review without a metric makes the node buggy (a script that printed "Val RMSE: 0.41" in its own words)', () => {
  const r = parseReview('{"is_bug": false, "summary": "RMSE printed", "metric": null, "lower_is_better": true}');
  assert.equal(verdict(r, RUN_OK, AIDEML), {
    buggy: true,
    metric: null,
    analysis: 'RMSE printed',
    lower_is_better: true,
  });
});

test('the review decides: a clean exit it calls a bug is buggy; a crash is buggy whatever it says', () => {
  const ok = parseReview('{"is_bug": false, "summary": "", "metric": 0.41, "lower_is_better": true}');
  assert.equal(verdict(ok, RUN_OK, AIDEML), { buggy: false, metric: 0.41, analysis: '', lower_is_better: true });
  const bug = parseReview('{"is_bug": true, "summary": "leaks the labels", "metric": 0.99, "lower_is_better": false}');
  assert.is(verdict(bug, RUN_OK, AIDEML).buggy, true);
  assert.is(verdict(ok, { ...RUN_OK, exit_code: 1 }, AIDEML).buggy, true);
  assert.is(verdict(ok, { ...RUN_OK, exit_code: null, timed_out: true }, AIDEML).buggy, true);
  // aira-dojo: the format check's refusal is a bug, and the task's direction ranks the node.
  assert.equal(verdict(ok, RUN_OK, { valid: false, reviewDirection: false }).buggy, true);
  assert.equal(verdict(ok, RUN_OK, { valid: true, reviewDirection: false }).lower_is_better, false);
});

test('reviews are read from function-call arguments or from JSON in text; an unreadable one is a bug report', () => {
  assert.equal(parseReview('Here: {"is_bug": false, "summary": "a {b}", "metric": 3}. Done.'), {
    is_bug: false,
    summary: 'a {b}',
    metric: 3,
  });
  assert.equal(parseReview('no json at all'), { is_bug: true, summary: '', metric: null, unreadable: true });
  // A metric that is not a number is none; a missing is_bug follows whether there is a metric.
  assert.equal(parseReview('{"metric": "0.5"}'), { is_bug: true, summary: '', metric: null });
  assert.equal(parseReview('{"metric": 0.5}'), { is_bug: false, summary: '', metric: 0.5 });
  assert.equal(Object.keys((reviewTool(true).parameters as { properties: object }).properties), [
    'is_bug',
    'summary',
    'metric',
    'lower_is_better',
  ]);
  assert.not.ok('lower_is_better' in (reviewTool(false).parameters as { properties: object }).properties);
});

test('every python or unlabelled block of a reply is merged in order; other languages are not code', () => {
  const text = 'Plan: two parts.\n```python\nimport os\n```\nthen\n```\nprint(os.sep)\n```\n```bash\nls\n```\n';
  assert.is(extractCode(text), 'import os\n\nprint(os.sep)\n');
  assert.is(planText(text), 'Plan: two parts.');
  assert.is(extractCode('no fence'), null);
  assert.is(planText('```python\nx=1\n```'), '');
});

function asking(...texts: string[]): { ctx: EpisodeContext; seen: PolicyRequest[] } {
  const seen: PolicyRequest[] = [];
  // Each ask gets the next text; the last one repeats.
  const act = async (req: PolicyRequest) => {
    seen.push(req);
    const text = texts[Math.min(seen.length - 1, texts.length - 1)];
    return { text, usage: { prompt_tokens: 1, completion_tokens: 2 } };
  };
  const policy: Policy = { name: 'written', kind: 'scripted', act };
  const ctx = {
    policy,
    task: { meta: { id: 't' } },
    signal: new AbortController().signal,
  } as unknown as EpisodeContext;
  return { ctx, seen };
}

const REQ: PolicyRequest = { scaffold: 'aide', purpose: 'draft', messages: [], turn: 0, sample: 0, history: [] };

test('a reply without code or without a plan is asked for again, up to three asks', async () => {
  const { ctx, seen } = asking('I will think about it.', '```python\nprint(1)\n```', 'Plan.\n```python\nprint(2)\n```');
  const usage = { prompt_tokens: 0, completion_tokens: 0, requests: 0, cached: 0 };
  const r = await askCode(ctx, REQ, usage);
  assert.ok(!('stop' in r));
  assert.equal(r, {
    plan: 'Plan.',
    code: 'print(2)\n',
    format_ok: true,
    retries: 2,
    text: 'Plan.\n```python\nprint(2)\n```',
  });
  assert.equal(
    seen.map((s) => s.attempt),
    [undefined, 1, 2],
  );
  assert.is(usage.requests, 3);
  // Three failures: the last reply's whole text is the code, as AIDE runs it.
  const again = asking('still no code');
  const last = await askCode(again.ctx, REQ, usage);
  assert.equal(last, { plan: '', code: 'still no code', format_ok: false, retries: 2, text: 'still no code' });
  assert.is(again.seen.length, 3);
});

const OPTS = { numDrafts: 1, debugProb: 0.5, maxDebugDepth: 2 };

test('a buggy leaf is debugged while its debug depth is at most the maximum (depth <= max)', () => {
  const at = (depth: number) => [node(0, { buggy: true, metric: null, debug_depth: depth })];
  const r = draws(0.1, 0.0);
  assert.equal(nextStep(OPTS, at(2), r).operator, 'debug');
  assert.is(r.used, 2);
  // One step deeper and the leaf is left: with no good node the search drafts again.
  assert.equal(nextStep(OPTS, at(3), draws(0.1, 0.0)), { operator: 'draft' });
  const parent = at(2)[0];
  assert.is(depthOf({ operator: 'debug', parent }, OPTS), 3);
  assert.is(depthOf({ operator: 'draft' }, { ...OPTS, draftDebugDepth: 1 }), 1);
});

test('after the drafts one draw is made every step, even with nothing to debug; a missed draw improves the best', () => {
  const nodes = [node(0, { metric: 0.2 }), node(1, { metric: 0.7, parent: 0, operator: 'improve' })];
  const r = draws(0.3);
  assert.equal(nextStep(OPTS, nodes, r), { operator: 'improve', parent: nodes[1] });
  assert.is(r.used, 1);
  const first = draws();
  assert.equal(nextStep({ ...OPTS, numDrafts: 3 }, nodes, first), { operator: 'draft' });
  assert.is(first.used, 0);
});

test('the best node: better in its own direction, the earlier one on a tie; buggy nodes never', () => {
  const nodes = [
    node(0, { metric: 0.3, lower_is_better: true }),
    node(1, { metric: 0.3, lower_is_better: true }),
    node(2, { metric: 0.1, lower_is_better: true, buggy: true }),
    node(3, { metric: 0.2, lower_is_better: true }),
  ];
  assert.is(best(nodes)?.id, 3);
  assert.is(best(nodes.slice(0, 2))?.id, 0);
  assert.is(best([node(0, { buggy: true, metric: null })]), undefined);
});

test('memory holds each good node plan, findings and metric, not one line of each plan', () => {
  const m = memory([node(0, { plan: 'Line one.\nLine two.' }), node(1, { buggy: true, metric: null })]);
  assert.is(m, 'Design: Line one.\nLine two.\nResults: found 0\nValidation metric: 0.5\n');
});

test('presets carry the upstream numbers; written values win', () => {
  assert.equal([AIDE_PRESETS['aira-greedy'].search.numDrafts, AIDE_PRESETS['aira-greedy'].search.debugProb], [5, 1]);
  assert.is(aideOptions({ preset: 'aira-greedy' }).maxDebugDepth, 20);
  assert.is(aideOptions({ preset: 'aira-greedy', max_debug_depth: 4 }).maxDebugDepth, 4);
  assert.equal(aideOptions({}).numDrafts, 3);
});

test("the journal in aideml's serialisation: parents in node2parent, worst metric on buggy nodes", () => {
  const j = aideJournal(
    [node(0, { buggy: true, metric: null, exit_code: 1 }), node(1, { parent: 0, operator: 'debug', metric: 0.4 })],
    1_000_000,
  );
  assert.equal(j.node2parent, { node0001: 'node0000' });
  assert.is(j.__version, '2');
  assert.equal(j.nodes[0].metric, { value: null, maximize: null });
  assert.equal(j.nodes[1].metric, { value: 0.4, maximize: true });
  assert.equal(
    j.nodes.map((n) => [n.step, n.is_buggy, n.exc_type, n.parent, n.children]),
    [
      [0, true, 'NonZeroExit', null, []],
      [1, false, null, null, []],
    ],
  );
  assert.is(j.nodes[1].ctime, 1001);
});

test('durations are stated in words', () => {
  assert.equal(
    [duration(3600), duration(5400), duration(90), duration(86400), duration(45)],
    ['1 hour', '1 hour 30 minutes', '1 minute 30 seconds', '1 day', '45 seconds'],
  );
});

test.run();
