// Advantage estimators and masking on numbers worked out by hand.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { EPSILON, groupAdvantages, returnsToGo, timedOutUnder, turnAdvantages } from './advantages.js';

const close = (a: number, b: number, tol = 1e-9) => assert.ok(Math.abs(a - b) < tol, `${a} vs ${b}`);
const g = (rewards: number[], timedOut: boolean[] = rewards.map(() => false)) =>
  rewards.map((reward, i) => ({ reward, timedOut: timedOut[i] }));

test('grpo: (R − mean) / (std + ε), std unbiased as verl computes it, population on request', () => {
  // Rewards 1, 0, 0.5, 0.5: mean 0.5, unbiased std sqrt((0.25 + 0.25) / 3) = 0.408248…
  const r = groupAdvantages(g([1, 0, 0.5, 0.5]), { estimator: 'grpo', maskTimeouts: 'drop' });
  close(r.mean, 0.5);
  close(r.std, Math.sqrt(0.5 / 3));
  close(r.members[0].advantage, 0.5 / (Math.sqrt(0.5 / 3) + EPSILON));
  close(r.members[1].advantage, -0.5 / (Math.sqrt(0.5 / 3) + EPSILON));
  close(r.members[2].advantage, 0);
  assert.not.ok(r.zeroSignal);
  // Population std: sqrt((0.25 + 0.25) / 4) = 0.353553…
  const p = groupAdvantages(g([1, 0, 0.5, 0.5]), { estimator: 'grpo', maskTimeouts: 'drop', std: 'population' });
  close(p.std, Math.sqrt(0.125));
  close(p.members[0].advantage, 0.5 / (Math.sqrt(0.125) + EPSILON));
});

test('drgrpo: R − mean, no scaling', () => {
  const r = groupAdvantages(g([0.9, 0.1, 0.5, 0.1]), { estimator: 'drgrpo', maskTimeouts: 'drop' });
  // mean 0.4
  r.members.forEach((m, i) => close(m.advantage, [0.5, -0.3, 0.1, -0.3][i]));
});

test('drop: a timed-out trajectory leaves the baseline and the loss; keep: it counts with its reward', () => {
  const rewards = [1, 0, 0.5, 0.2];
  const timedOut = [false, false, false, true];
  const drop = groupAdvantages(g(rewards, timedOut), { estimator: 'drgrpo', maskTimeouts: 'drop' });
  close(drop.mean, 0.5);
  assert.equal(drop.members[3], { advantage: 0, masked: true, reason: 'timed_out' });
  close(drop.members[0].advantage, 0.5);
  const keep = groupAdvantages(g(rewards, timedOut), { estimator: 'drgrpo', maskTimeouts: 'keep' });
  close(keep.mean, 0.425);
  assert.is(keep.members[3].masked, false);
  close(keep.members[3].advantage, 0.2 - 0.425);
});

test('drop-after: a timed-out trajectory counts in the baseline, then leaves the loss', () => {
  const r = groupAdvantages(g([1, 0, 0.5, 0.2], [false, false, false, true]), {
    estimator: 'drgrpo',
    maskTimeouts: 'drop-after',
  });
  // Baseline over all four (0.425), as keep; the timed-out member is masked, as drop.
  close(r.mean, 0.425);
  assert.equal(r.members[3], { advantage: 0, masked: true, reason: 'timed_out' });
  close(r.members[0].advantage, 1 - 0.425);
  close(r.members[2].advantage, 0.5 - 0.425);
  // The std includes it too: unbiased over [1, 0, 0.5, 0.2].
  const grpo = groupAdvantages(g([1, 0, 0.5, 0.2], [false, false, false, true]), {
    estimator: 'grpo',
    maskTimeouts: 'drop-after',
  });
  const sd = Math.sqrt([1, 0, 0.5, 0.2].reduce((a, x) => a + (x - 0.425) ** 2, 0) / 3);
  close(grpo.std, sd);
  close(grpo.members[1].advantage, -0.425 / (sd + EPSILON));
});

test('timeout rules: any step, a share of steps, or the last step; running out of budget always counts', () => {
  const run = (...timedOut: boolean[]) => ({
    ended: 'answer',
    turns: timedOut.map((t) => ({ action: 'code', timed_out: t })),
  });
  const early = run(true, false, false, false, false);
  assert.is(timedOutUnder('any-step', early), true);
  assert.is(timedOutUnder('last-step', early), false);
  assert.is(timedOutUnder('fraction:0.2', early), true); // 1 of 5
  assert.is(timedOutUnder('fraction:0.25', early), false);
  const last = run(false, false, true);
  assert.is(timedOutUnder('last-step', last), true);
  // A reply after the killed execution (the agent answered): its last turn is not an execution.
  assert.is(
    timedOutUnder('last-step', { ended: 'answer', turns: [...last.turns, { action: 'answer', timed_out: false }] }),
    false,
  );
  assert.is(timedOutUnder('any-step', run(false, false)), false);
  assert.is(timedOutUnder('any-step', { ended: 'answer', turns: [] }), false);
  for (const rule of ['any-step', 'last-step', 'fraction:1'] as const)
    assert.is(timedOutUnder(rule, { ended: 'time_budget', turns: [] }), true);
});

test('crashed rollouts are masked under either setting', () => {
  const r = groupAdvantages([{ reward: 0, timedOut: false, crashed: true }, ...g([1, 0])], {
    estimator: 'grpo',
    maskTimeouts: 'keep',
  });
  assert.equal(r.members[0], { advantage: 0, masked: true, reason: 'crashed' });
  close(r.mean, 0.5);
});

test('a group whose rewards are all equal gives no gradient', () => {
  for (const estimator of ['grpo', 'drgrpo'] as const) {
    const r = groupAdvantages(g([0.1, 0.1, 0.1, 0.1]), { estimator, maskTimeouts: 'drop' });
    assert.ok(r.zeroSignal);
    assert.ok(r.members.every((m) => m.advantage === 0 && !m.masked));
  }
  // One member left after masking: no baseline to compare against.
  assert.ok(groupAdvantages(g([1, 0], [false, true]), { estimator: 'grpo', maskTimeouts: 'drop' }).zeroSignal);
});

test('turn-level returns G_{i,s} − mean_i G_{i,1}', () => {
  returnsToGo([0.1, 0, 0.3]).forEach((x, i) => close(x, [0.4, 0.3, 0.3][i]));
  const group = [
    { reward: 0, timedOut: false, turnRewards: [0.1, 0.2, 0.3] }, // G = 0.6, 0.5, 0.3
    { reward: 0, timedOut: false, turnRewards: [0, 0.2] }, // G = 0.2, 0.2
    { reward: 0, timedOut: true, turnRewards: [1] },
  ];
  const adv = turnAdvantages(group, [false, false, true]);
  // Baseline: mean of first-turn returns of unmasked members = (0.6 + 0.2) / 2 = 0.4.
  adv[0].forEach((a, i) => close(a, [0.2, 0.1, -0.1][i]));
  adv[1].forEach((a, i) => close(a, [-0.2, -0.2][i]));
  assert.equal(adv[2], [0]);
  // Outcome rewards only: every turn carries the trajectory's centred reward.
  const outcome = turnAdvantages(
    [
      { reward: 1, timedOut: false, turns: 3 },
      { reward: 0, timedOut: false, turns: 2 },
    ],
    [false, false],
  );
  assert.equal(outcome, [
    [0.5, 0.5, 0.5],
    [-0.5, -0.5],
  ]);
});

test('timeout_rule release counts the tool responses of the conversation the release ends with, not pruned ones', () => {
  const run = (timed_out: boolean, pruned?: true) => ({
    action: 'code',
    timed_out,
    tool_response: true,
    ...(pruned ? { pruned } : {}),
  });
  // One timeout in five responses is not more than a fifth; with three ok replies pruned, it is one in two.
  const turns = [run(false, true), run(false, true), run(false, true), run(true), run(false)];
  assert.is(timedOutUnder('release', { ended: 'max_turns', turns }), true);
  assert.is(timedOutUnder('release', { ended: 'max_turns', turns: turns.map(({ pruned: _, ...t }) => t) }), false);
});

test.run();
