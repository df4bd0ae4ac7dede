// A step's batch for a trainer worker: exact tokens per reply, the tokenizer
// and the loss's aggregation; what cannot be trained on is masked or refused.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { Trajectory } from '../../agents/trajectory.js';
import { EnvError } from '../../core/errors.js';
import batchSchema from '../../schemas/trainer/batch.schema.json';
import { validateWithSchema } from '../../core/jsonschema.js';
import { buildBatch, templateSamples, type BatchOptions, type Rollout } from './batch.js';

const tokenizer = { tokenizer_sha256: 'a'.repeat(64), chat_template_sha256: 'b'.repeat(64) };
const opts: BatchOptions = {
  advantage: 'grpo',
  maskTimeouts: 'drop',
  timeoutRule: 'any-step',
  maxTurns: 15,
  std: 'unbiased',
  groupSize: 3,
  hyper: { lr: 1e-6, clip_low: 0.2, clip_high: 0.28, kl: 0, temperature: 1 },
  exact: { tokenizer, lossAggMode: 'seq-mean-token-mean' },
};

/** A rollout with one reply per entry of `replies` (its tokens, or none), and a reward. */
function rollout(
  sample: number,
  reward: number,
  replies: Array<{ prompt_ids: number[]; token_ids: number[]; logprobs: number[] } | null>,
): Rollout {
  const messages = [
    { role: 'system', content: 's' },
    { role: 'user', content: 'task' },
    ...replies.flatMap((_, i) => [
      { role: 'assistant', content: `r${i}` },
      { role: 'user', content: 'obs' },
    ]),
  ];
  const turns = replies.map((t, i) => ({
    turn: i,
    action: 'invalid',
    observation: 'obs',
    exit_code: null,
    timed_out: false,
    duration_ms: 0,
    format_ok: false,
    ...(t ? { tokens: t, logprobs: t.logprobs } : {}),
  }));
  return {
    task_id: 'x',
    group_id: 'g',
    sample,
    reward,
    ended: 'max_turns',
    turns,
    messages,
    variables: {},
  } as unknown as Trajectory;
}

test('every unmasked trajectory carries its replies as exact tokens, with the tokenizer and loss_agg_mode', () => {
  const a = { prompt_ids: [1, 2], token_ids: [3, 4], logprobs: [-0.1, -0.2] };
  const b = { prompt_ids: [1, 2, 3, 4, 9], token_ids: [5], logprobs: [-0.3] };
  const batch = buildBatch(1, [rollout(0, 1, [a, b]), rollout(1, 0, [a]), rollout(2, 0, [])], opts);
  assert.equal(batch.tokenizer, tokenizer);
  assert.is(batch.loss_agg_mode, 'seq-mean-token-mean');
  const [t0, t1, t2] = batch.trajectories;
  assert.equal(t0.turns, [a, b]);
  assert.equal(t1.turns, [a]);
  // The policy never replied: nothing to train on, so it is masked as crashed and sends no turns.
  assert.equal([t2.masked, t2.mask_reason, t2.turns], [true, 'crashed', undefined]);
  assert.ok(t0.advantage > 0 && t1.advantage < 0);
  // Trajectory-level credit unless turn-level is asked for.
  assert.is(batch.advantage_level, undefined);
  assert.is(
    buildBatch(1, [rollout(0, 1, [a]), rollout(1, 0, [a])], {
      ...opts,
      exact: { ...opts.exact!, advantageLevel: 'turn' },
    }).advantage_level,
    'turn',
  );
  // Without `exact` (the template trainer) no tokens are sent.
  const plain = buildBatch(1, [rollout(0, 1, [a]), rollout(1, 0, [a])], { ...opts, exact: undefined });
  assert.is(plain.tokenizer, undefined);
  assert.is(plain.trajectories[0].turns, undefined);
});

test('a reply the conversation kept cut is trained on as generated, with its log-probabilities', () => {
  const a = { prompt_ids: [1], token_ids: [3, 4], logprobs: [-0.1, -0.2] };
  const cut = rollout(0, 1, [a, a]) as Trajectory;
  cut.turns[0].raw_reply = 'r0<tool_response>imagined';
  const batch = buildBatch(1, [cut, rollout(1, 0, [a])], { ...opts, exact: undefined });
  const replies = batch.trajectories[0].messages.filter((m) => m.loss_mask === 1);
  assert.equal(
    replies.map((m) => [m.content, m.logprobs]),
    [
      ['r0<tool_response>imagined', a.logprobs],
      ['r1', a.logprobs],
    ],
  );
  // What later turns were prompted with stays the cut text.
  assert.is(cut.messages[2].content, 'r0');
});

test('a reply without token ids is refused, naming the trajectory and the reply', () => {
  const a = { prompt_ids: [1], token_ids: [3], logprobs: [-0.1] };
  assert.throws(
    () => buildBatch(1, [rollout(0, 1, [a, null]), rollout(1, 0, [a])], opts),
    (err: Error) =>
      err instanceof EnvError &&
      /trajectory g#0, reply 2: the policy's endpoint returned no token ids/.test(err.message),
  );
});

test("shaped turn rewards: turn advantages G_{i,s} − mean G_{i,1} with no std, the turn level sent, each decision its turn's", () => {
  const a = { prompt_ids: [1], token_ids: [3], logprobs: [-0.1] };
  const choice = (index: number) => ({ action: 'x', index, features: [1], logprob: -1, entropy: 1 });
  const withChoices = (r: Rollout) =>
    ({ ...r, turns: (r as Trajectory).turns.map((t, i) => ({ ...t, choice: choice(i) })) }) as Rollout;
  const rollouts = [
    withChoices(rollout(0, 1, [a, a])),
    withChoices(rollout(1, 0, [a, a])),
    withChoices(rollout(2, 0, [a])),
  ];
  // Equal outcomes for samples 1 and 2, and shaping that tells them apart.
  const shaped = new Map([
    ['g#0', [0.2, 1]],
    ['g#1', [-0.3, 0]],
    ['g#2', [0.1]],
  ]);
  const batch = buildBatch(1, rollouts, { ...opts, shaped });
  // G_1 = 1.2, −0.3, 0.1: mean 1/3.
  const mu = (1.2 - 0.3 + 0.1) / 3;
  const [t0, t1, t2] = batch.trajectories;
  [1.2 - mu, 1 - mu].forEach((x, i) => assert.ok(Math.abs(t0.turn_advantages[i] - x) < 1e-12));
  [-0.3 - mu, -mu].forEach((x, i) => assert.ok(Math.abs(t1.turn_advantages[i] - x) < 1e-12));
  assert.ok(Math.abs(t2.advantage - (0.1 - mu)) < 1e-12, "the trajectory advantage is its first turn's");
  assert.equal([batch.groups[0].std, batch.groups[0].zero_signal], [0, false]);
  assert.is(batch.advantage_level, 'turn');
  const samples = templateSamples(batch, rollouts);
  assert.equal(
    samples.map((s) => [s.action, Number(s.advantage.toFixed(6))]),
    [
      [0, 0.866667],
      [1, 0.666667],
      [0, -0.633333],
      [1, -0.333333],
      [0, -0.233333],
    ],
  );
});

test("a batch with the release's unknown ending is one the trainer protocol accepts", () => {
  const a = { prompt_ids: [1, 2], token_ids: [3, 4], logprobs: [-0.1, -0.2] };
  // A call and an answer in one reply before the last call: the release's unknown ending, masked.
  const unknown = rollout(1, 0.5, [a, a]);
  (unknown as { ended: string }).ended = 'answer';
  const batch = buildBatch(1, [rollout(0, 1, [a]), unknown], { ...opts, timeoutRule: 'release', groupSize: 2 });
  assert.equal([batch.trajectories[1].masked, batch.trajectories[1].mask_reason], [true, 'unknown']);
  assert.equal(validateWithSchema(batchSchema, batch, new Map(), []), []);
});

test.run();
