// Turn-level shaping on numbers worked out by hand: Eq. 1 with a stub scorer
// whose log-probabilities are known, TIPS's potential change, Eq. 2–3 returns
// and advantages, the β pilot, the shuffle control and the solution bank.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { groupAdvantages } from '../grpo/advantages.js';
import type { ChatMessage } from '../llm/client.js';
import type { TurnRecord } from '../scaffolds/types.js';
import { reduceSummary, SolutionBank, summarise, type BankEntry } from './bank.js';
import { toolCalls } from './calls.js';
import { calibrateBeta, shapedAdvantages, shapedRewards, shuffleScores } from './returns.js';
import { referenceMessage, spiceScore, spiceTurns } from './spice.js';
import { tipsTurns } from './tips.js';
import { spanTokens, type ScoreItem, type Scorer } from './types.js';

const close = (a: number, b: number, tol = 1e-9) => assert.ok(Math.abs(a - b) < tol, `${a} vs ${b}`);
const turn = (action: TurnRecord['action'], extra: Partial<TurnRecord> = {}): TurnRecord => ({
  turn: 0,
  action,
  observation: '',
  exit_code: 0,
  timed_out: false,
  duration_ms: 0,
  format_ok: true,
  ...extra,
});

// An mlab episode: a file action, a diagnostic tool, an unparsable reply, the answer.
const CALL = 'Action: List Files\nAction Input: {}';
const TOOL = 'Action: label_balance\nAction Input: {"path": "train.csv"}';
const EP = {
  scaffold: 'mlab',
  messages: [
    { role: 'system', content: 'SYS' },
    { role: 'user', content: 'Begin.' },
    { role: 'assistant', content: `Thought: look first\n${CALL}` },
    { role: 'user', content: 'Observation: OBS-ONE' },
    { role: 'assistant', content: `Thought: balance?\n${TOOL}` },
    { role: 'user', content: 'Observation: OBS-TWO' },
    { role: 'assistant', content: 'no action here' },
    { role: 'user', content: 'Observation: invalid action' },
    { role: 'assistant', content: 'Action: Final Answer\nAction Input: {}' },
  ] as ChatMessage[],
  turns: [
    turn('action', { name: 'List Files' }),
    turn('tool', { name: 'label_balance', args: { path: 'train.csv' } }),
    turn('invalid'),
    turn('answer'),
  ],
};

/** Words are tokens. The plain branch and each reference have fixed per-token log-probabilities. */
function stubScorer(table: (item: ScoreItem) => number[] | null): Scorer & { seen: ScoreItem[] } {
  const seen: ScoreItem[] = [];
  return {
    seen,
    async score(items) {
      seen.push(...items);
      return items.map(table);
    },
  };
}
const words = (s: string) => s.split(/\s+/).filter(Boolean);
const refOf = (it: ScoreItem) => /SPICE_REFERENCE:\n(\S+)/.exec(it.messages[it.messages.length - 1].content)?.[1];

test('tool calls: the history stops before the reply, the call is the Action part, non-calls and answers are left out', () => {
  const calls = toolCalls(EP);
  assert.equal(
    calls.map((c) => [c.turn, c.category]),
    [
      [0, 'execution'],
      [1, 'diagnostic'],
    ],
  );
  assert.equal(
    calls[0].history.map((m) => m.content),
    ['SYS', 'Begin.'],
  );
  assert.is(calls[0].prefix, 'Thought: look first\n');
  assert.is(calls[0].call, CALL);
  // Earlier observations stay in the history; the turn's own is only in `after` (TIPS's h_s).
  assert.equal(calls[1].history.map((m) => m.content).slice(-1), ['Observation: OBS-ONE']);
  assert.equal(calls[1].after.map((m) => m.content).slice(-1), ['Observation: OBS-TWO']);
  // ReAct: the fenced block after the reasoning.
  const react = toolCalls({
    scaffold: 'react',
    messages: [
      { role: 'user', content: 't' },
      { role: 'assistant', content: '<think>```python\nno\n```</think>\n```python\nx = 1\n```' },
    ],
    turns: [turn('code')],
  });
  assert.is(react[0].call, '```python\nx = 1\n```');
  assert.is(react[0].prefix, '<think>```python\nno\n```</think>\n');
});

test('SPICE Eq. 1: exact d from known log-probabilities; the observation and the future never reach the scorer', async () => {
  // Call tokens: Action: | List | Files | Action | Input: | {} (6 words).
  const plain = [-2, -1, -3, -1, -1, -4];
  const withA = [-1, -1, -1, -1, -1, -1]; // differences 1, 0, 2, 0, 0, 3: mean 1
  const withB = [-2, -2, -2, -2, -2, -2]; // differences 0, −1, 1, −1, −1, 2: mean 0
  close(spiceScore([withA, withB], plain), 0.5);
  const scorer = stubScorer((it) => {
    if (it.reply !== CALL) return words(it.reply).map(() => -1);
    const ref = refOf(it);
    return ref === 'alpha' ? withA : ref === 'beta' ? withB : plain;
  });
  const scores = await spiceTurns(EP, ['alpha', 'beta'], scorer);
  assert.is(scores.length, 2);
  close(scores[0].d!, 0.5);
  assert.is(scores[1].d, 0); // every branch gives −1 a token: no support either way
  // 2 calls × (1 plain + 2 references); the reasoning is context, never a target.
  assert.is(scorer.seen.length, 6);
  for (const it of scorer.seen) {
    const text = it.messages.map((m) => m.content).join('\n');
    if (it.reply === CALL) assert.not.match(text, 'OBS-ONE');
    assert.not.match(text, 'OBS-TWO');
    assert.not.match(text, 'Final Answer');
  }
  assert.equal(
    scorer.seen.filter((it) => it.reply === CALL).map((it) => it.prefix),
    ['Thought: look first\n', 'Thought: look first\n', 'Thought: look first\n'],
  );
});

test('SPICE: no reference means zero-shaping calls; a reference over the context is cut to fit, history and call kept whole', async () => {
  const none = await spiceTurns(
    EP,
    [],
    stubScorer(() => [0]),
  );
  assert.equal(
    none.map((s) => [s.d, s.reason]),
    [
      [null, 'no-reference'],
      [null, 'no-reference'],
    ],
  );
  // A context of LIMIT words (messages, prefix and call): the first call's plain branch takes 11 of them
  // (SYS, Begin., the reasoning's 3 and the call's 6), the reference message its own words besides the summary.
  const LIMIT = 40;
  const size = (it: ScoreItem) =>
    words([...it.messages.map((m) => m.content), it.prefix ?? '', it.reply].join(' ')).length;
  const plain = [-2, -1, -3, -1, -1, -4];
  // Each kept summary word raises every call token by 0.1: d is a tenth of the words the branch kept.
  const kept = (it: ScoreItem) =>
    words(/SPICE_REFERENCE:\n([^]*?)\n\nSPICE_INSTRUCTION/.exec(it.messages[it.messages.length - 1].content)?.[1] ?? '')
      .length;
  const limited = stubScorer((it) =>
    size(it) > LIMIT ? null : it.reply === CALL ? plain.map((x) => x + 0.1 * kept(it)) : words(it.reply).map(() => -1),
  );
  const long = Array.from({ length: 30 }, (_, i) => `w${i}`).join(' ');
  const [first] = await spiceTurns(EP, ['alpha', long], limited);
  const room = LIMIT - 11 - words(referenceMessage('').content).length;
  assert.ok(room > 1 && room < 30);
  // alpha fits whole (d = 0.1); the long summary keeps its first `room` words (d = 0.1 · room); the mean of the two.
  close(first.d!, (0.1 + 0.1 * room) / 2);
  assert.is(first.truncated, 1);
  const cut = limited.seen.filter((it) => it.reply === CALL && kept(it) === room);
  assert.ok(cut.length >= 1, 'the longest prefix that fits was scored');
  const shown = cut[0].messages[cut[0].messages.length - 1].content;
  assert.match(shown, `SPICE_REFERENCE:\n${long.split(' ').slice(0, room).join(' ')}\n\nSPICE_INSTRUCTION`);
  // Only the summary is cut: the history before the reference and the scored call are the plain branch's.
  assert.equal(cut[0].messages.slice(0, -1), [
    { role: 'system', content: 'SYS' },
    { role: 'user', content: 'Begin.' },
  ]);
  assert.is(cut[0].reply, CALL);
  for (const it of limited.seen.filter((x) => x.reply === CALL)) {
    assert.equal(it.messages.slice(0, 2), EP.messages.slice(0, 2));
    assert.is(it.prefix, 'Thought: look first\n');
  }
  // A reference of which not a word fits is left out (alpha alone); history and call over the context: unscored.
  const partial = stubScorer((it) =>
    /beta/.test(it.messages[it.messages.length - 1].content)
      ? null
      : it.reply === CALL
        ? plain.map((x) => x + 0.1 * kept(it))
        : words(it.reply).map(() => -1),
  );
  close((await spiceTurns(EP, ['alpha', 'beta'], partial))[0].d!, 0.1);
  const none2 = await spiceTurns(
    EP,
    ['alpha'],
    stubScorer(() => null),
  );
  assert.equal(
    none2.map((x) => x.reason),
    ['overflow', 'overflow'],
  );
  // Zero shaping for them in Eq. 2.
  assert.equal(shapedRewards(1, 4, none2, 5), [0, 0, 0, 1]);
});

test("exact scoring: the sampled ids go to a scorer with the policy's tokenizer, and the call's tokens are found by offset", async () => {
  // Reply "ab cd" sampled as [a][b ][cd][<end>]: offsets 0, 1, 3, 5 (the end token decodes to nothing).
  assert.equal(spanTokens([0, 1, 3, 5], 3, 5), [2, 3]);
  assert.equal(spanTokens([0, 1, 3, 5], 2, 5), [1, 3]); // a token straddling the call's start counts
  assert.equal(spanTokens([0, 1, 3, 5], 0, 5), [0, 3]);
  assert.equal(spanTokens([0, 5], 5, 5), [0, 0]);
  const ids = [7, 8, 9];
  const ep = {
    ...EP,
    turns: EP.turns.map((t, i) =>
      i === 0 ? { ...t, tokens: { prompt_ids: [1], token_ids: ids, logprobs: [0, 0, 0] } } : t,
    ),
  };
  const scorer = stubScorer((it) => words(it.reply).map(() => -1));
  await spiceTurns(ep, ['alpha'], scorer, undefined, true);
  assert.equal(
    scorer.seen.filter((it) => it.sampled).map((it) => it.sampled),
    [ids, ids],
  );
  // Another scorer's tokenizer: text only.
  const other = stubScorer((it) => words(it.reply).map(() => -1));
  await spiceTurns(ep, ['alpha'], other);
  assert.ok(other.seen.every((it) => !it.sampled));
});

test("TIPS: the reference answers' mean token log-likelihood after the turn minus before it", async () => {
  // Φ grows with the history: −3 per summary token before any observation, −2 after OBS-ONE, −1.5 after OBS-TWO.
  const scorer = stubScorer((it) => {
    const text = it.messages.map((m) => m.content).join('\n');
    const lp = text.includes('OBS-TWO') ? -1.5 : text.includes('OBS-ONE') ? -2 : -3;
    // Summary "b b" is twice as likely per token as "a": the average over summaries is still Φ's level.
    return words(it.reply).map(() => lp + (it.reply === 'a' ? -0.5 : 0.5));
  });
  const s = await tipsTurns(EP, ['a', 'b b'], scorer);
  close(s[0].d!, 1); // −2 − (−3)
  close(s[1].d!, 0.5); // −1.5 − (−2)
  // Summaries are scored as replies to the training-only request; the call itself is never a target.
  assert.ok(scorer.seen.every((it) => it.reply === 'a' || it.reply === 'b b'));
  // Three distinct histories (before the first call, after it, after the second), each scored once per summary.
  assert.is(scorer.seen.length, 3 * 2);
});

test('Eq. 2–3 on a hand-worked three-turn, two-rollout group', () => {
  const sc = (turn: number, d: number | null) => ({ turn, category: 'execution' as const, d });
  // β = 0.5. Rollout 1: d = 0.5, unscored, −0.2; success. Rollout 2: d = 0.1, 0.4, (no call); failure.
  const r1 = shapedRewards(1, 3, [sc(0, 0.5), sc(1, null), sc(2, -0.2)], 0.5);
  const r2 = shapedRewards(0, 3, [sc(0, 0.1), sc(1, 0.4)], 0.5);
  [0.25, 0, 0.9].forEach((x, i) => close(r1[i], x));
  [0.05, 0.2, 0].forEach((x, i) => close(r2[i], x));
  // G1 = 1.15, 0.9, 0.9; G2 = 0.25, 0.2, 0; μ = (1.15 + 0.25) / 2 = 0.7.
  const { advantages, baseline } = shapedAdvantages([
    { rewards: r1, masked: false },
    { rewards: r2, masked: false },
  ]);
  close(baseline, 0.7);
  [0.45, 0.2, 0.2].forEach((x, i) => close(advantages[0][i], x));
  [-0.45, -0.5, -0.7].forEach((x, i) => close(advantages[1][i], x));
  // A masked member leaves the baseline and gets zeros.
  const m = shapedAdvantages([
    { rewards: r1, masked: false },
    { rewards: r2, masked: true },
    { rewards: [0, 0, 0], masked: false },
  ]);
  close(m.baseline, 1.15 / 2);
  assert.equal(m.advantages[1], [0, 0, 0]);
  // Equal complete returns, different later returns: the group still carries signal.
  const eq = shapedAdvantages([
    { rewards: [0.2, -0.2, 1], masked: false },
    { rewards: [-0.2, 0.2, 1], masked: false },
  ]);
  assert.ok(eq.advantages[0][1] !== 0 && eq.advantages[0][1] === -eq.advantages[1][1]);
});

test('β = 0: outcome-only, mean-centred advantages at every turn', () => {
  const outcomes = [1, 0, 0, 1, 1];
  const turns = [3, 2, 4, 1, 3];
  const group = outcomes.map((o, i) => ({
    rewards: shapedRewards(o, turns[i], [{ turn: 0, category: 'execution', d: 0.9 - i }], 0),
    masked: false,
  }));
  const { advantages } = shapedAdvantages(group);
  const plain = groupAdvantages(
    outcomes.map((reward) => ({ reward, timedOut: false })),
    { estimator: 'drgrpo', maskTimeouts: 'drop' },
  );
  advantages.forEach((a, i) => {
    assert.is(a.length, turns[i]);
    a.forEach((x) => close(x, plain.members[i].advantage));
  });
});

test("β calibration: the pilot's mean |β·d| lands inside κ = [0.05, 0.3]", () => {
  // Scores of very different scales: the coefficient adapts, the magnitude does not.
  for (const scale of [1e-4, 0.03, 1, 40]) {
    const pilot = Array.from({ length: 25 }, (_, i) => scale * Math.sin(i * 1.7 + 0.3));
    const c = calibrateBeta(pilot, [0.05, 0.3])!;
    const shaped = pilot.reduce((a, d) => a + Math.abs(c.beta * d), 0) / pilot.length;
    assert.ok(shaped >= 0.05 && shaped <= 0.3, `scale ${scale}: mean |β·d| = ${shaped}`);
    close(shaped, c.mean_abs_shaping, 1e-12);
    assert.ok(c.in_range);
    close(c.kappa, 0.175);
    assert.is(c.turns, 25);
  }
  assert.is(calibrateBeta([], [0.05, 0.3]), null);
  close(calibrateBeta([0.5, -0.5], 0.1)!.beta, 0.1 / (0.5 + 1e-8));
});

test('shuffle control: within task and category, each permutation group keeps its multiset', () => {
  const entries = [
    ...[0.1, 0.2, 0.3, 0.4, 0.5, 0.6].map((d) => ({ task_id: 'a', category: 'diagnostic' as const, d })),
    ...[-1, -2, -3, -4].map((d) => ({ task_id: 'a', category: 'execution' as const, d })),
    { task_id: 'a', category: 'execution' as const, d: null },
    ...[7, 8, 9, 10, 11].map((d) => ({ task_id: 'b', category: 'diagnostic' as const, d })),
  ];
  const out = shuffleScores(entries, 'step1');
  const key = (e: (typeof entries)[number]) => `${e.task_id}/${e.category}`;
  for (const k of new Set(entries.map(key))) {
    const before = entries.filter((e) => key(e) === k).map((e) => e.d);
    const after = out.filter((e) => key(e) === k).map((e) => e.d);
    assert.equal([...after].sort(), [...before].sort(), k);
  }
  assert.is(out[10].d, null);
  // Correspondence is broken: some score moved.
  assert.ok(out.some((e, i) => e.d !== entries[i].d));
  assert.equal(shuffleScores(entries, 'step1'), out);
});

test('solution bank: verified trajectories only, no duplicates, K drawn without replacement, reduced summaries', () => {
  const traj = (task: string, sample: number, success: number, code: string) =>
    ({
      task_id: task,
      group_id: 'g',
      sample,
      variables: { success },
      turns: [turn('code', { code, exit_code: 0 }), turn('validate'), turn('answer')],
    }) as never;
  const bank = new SolutionBank([
    {
      task_id: 't',
      text: 'demo one',
      source: 'demonstration',
      step: 0,
      from: 'eval#0',
      writer: 'procedural',
    } satisfies BankEntry,
  ]);
  const added = bank.addVerified(
    [
      traj('t', 0, 1, 'm = Forest()\nm.fit(X, y)'),
      traj('t', 1, 0, 'x()'),
      traj('t', 2, 1, 'm = Forest()\nm.fit(X, y)'),
      traj('u', 0, 1, 'lr.fit(X)'),
    ],
    'rl',
    3,
  );
  assert.is(added, 2);
  assert.is(bank.size('t'), 2);
  const s = summarise(
    traj(
      't',
      0,
      1,
      'import x\ndef read(p):\n    return load(p)\nX, y = read("a")\nm = Forest()\nm.fit(X, y)\nprint(m)',
    ),
  );
  assert.match(s, /ran code \(m = Forest\(\); m\.fit\(X, y\)\)/);
  assert.match(s, /validated the submission format/);
  for (let i = 0; i < 8; i++)
    bank.add({ task_id: 'v', text: `s${i}`, source: 'rl', step: 1, from: '', writer: 'procedural' });
  const drawn = bank.draw('v', 3, 'step2');
  assert.is(drawn.length, 3);
  assert.is(new Set(drawn.map((e) => e.text)).size, 3);
  assert.equal(bank.draw('v', 3, 'step2'), drawn);
  assert.is(bank.draw('t', 8, 'x').length, 2);
  assert.is(reduceSummary('one two three four five'), 'one two three');
});

test.run();
