// The sft stage's data handling: reading conversations (bad lines named by
// FILE:LINE), filters, near-duplicate removal, the seeded split by task, and
// the learning-rate schedules.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { applyFilters, splitExamples } from './data.js';
import { readChatJsonl, trajectoryExamples, type Example } from './examples.js';
import { dedup, jaccard, shingles, signature, similarity } from './dedup.js';
import { learningRate, warmupSteps } from '../shared/schedule.js';

const WORDS =
  'the model reads twelve features then fits a gradient boosted forest with early stopping on the validation split and writes submission csv after checking its columns'.split(
    ' ',
  );

/** An example whose one reply is `words`. */
const ex = (words: string[], o: Partial<Example> = {}): Example => ({
  messages: [
    { role: 'system', content: 'you are an ml agent' },
    { role: 'user', content: 'solve the task' },
    { role: 'assistant', content: words.join(' ') },
  ],
  source: 'x',
  group: o.group ?? words.join(' '),
  rank: 0,
  ...o,
});

async function withFile(text: string, fn: (file: string) => Promise<void> | void): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'mlepipe-sft-data-'));
  try {
    await writeFile(join(dir, 'f.jsonl'), text);
    await fn(join(dir, 'f.jsonl'));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

test('a chat JSONL line that is not a conversation is reported as FILE:LINE with the reason', async () => {
  const good = JSON.stringify({
    messages: [
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: 'hello' },
    ],
    reward: 0.5,
  });
  const lines = [
    good,
    '',
    '{"messages": [{"role": "user", "content": "hi"}]}',
    '{"text": "hello"}',
    '{"messages": [{"role": "tool", "content": "x"}, {"role": "assistant", "content": "y"}]}',
    '{not json',
    '[1, 2]',
  ];
  await withFile(lines.join('\n') + '\n', (file) => {
    const { examples, problems } = readChatJsonl(file, 'chat.jsonl');
    assert.is(examples.length, 1);
    assert.is(examples[0].reward, 0.5);
    assert.is(examples[0].source, 'chat.jsonl:1');
    assert.equal(problems, [
      'chat.jsonl:3: not a conversation: has no assistant message (nothing to learn from)',
      'chat.jsonl:4: not a conversation: has no "messages" array',
      'chat.jsonl:5: not a conversation: messages[0].role must be one of system, user, assistant, not "tool"',
      `chat.jsonl:6: not JSON (${jsonError('{not json')})`,
      'chat.jsonl:7: not a conversation: not a JSON object',
    ]);
  });
});

function jsonError(text: string): string {
  try {
    JSON.parse(text);
  } catch (err) {
    return (err as Error).message;
  }
  return '';
}

test('trajectories: what the filters read comes from the recorded variables; crashed rollouts are skipped', async () => {
  const traj = (task: string, success: number, valid: number, reward: number | null, improvement = 0) =>
    JSON.stringify({
      task_id: task,
      messages: ex(['a', 'b', task]).messages,
      reward,
      variables: { success, valid, improvement },
    });
  const text = [
    traj('t1', 1, 1, 1),
    traj('t2', 0, 1, 0.4),
    traj('t3', 0, 0, null),
    JSON.stringify({ crashed: true, task_id: 't4' }),
    traj('t5', 1, 1, 0.9, 2),
  ].join('\n');
  await withFile(text, (file) => {
    const { examples, skipped } = trajectoryExamples(file, 'ev/trajectories.jsonl');
    assert.is(skipped, 1);
    assert.equal(
      examples.map((e) => [e.group, e.success, e.valid, e.reward, e.rank]),
      [
        ['t1', true, true, 1, 0],
        ['t2', false, true, 0.4, 0],
        ['t3', false, false, null, 0],
        ['t5', true, true, 0.9, 2],
      ],
    );
    assert.equal(Object.keys(examples[0].messages[0]), ['role', 'content']);
    const kept = (f: Parameters<typeof applyFilters>[1]) => applyFilters(examples, f);
    assert.equal(
      kept({ success: true, valid_submission: false }).kept.map((e) => e.group),
      ['t1', 't5'],
    );
    assert.equal(
      kept({ success: false, valid_submission: true }).kept.map((e) => e.group),
      ['t1', 't2', 't5'],
    );
    const byReward = kept({ success: false, valid_submission: false, min_reward: 0.5 });
    assert.equal(
      byReward.kept.map((e) => e.group),
      ['t1', 't5'],
    );
    // A run without a reward does not pass a reward filter.
    assert.equal(byReward.dropped, { success: 0, min_reward: 2, valid_submission: 0 });
    assert.equal(kept({ success: true, valid_submission: true, min_reward: 0.95 }).dropped, {
      success: 2,
      min_reward: 1,
      valid_submission: 0,
    });
  });
});

test('the MinHash estimate follows the exact Jaccard similarity of the replies', () => {
  const a = shingles(ex(WORDS));
  const b = shingles(ex([...WORDS.slice(0, 20), 'quickly', ...WORDS.slice(20)]));
  const c = shingles(ex([...WORDS].reverse()));
  for (const [x, y] of [
    [a, b],
    [a, c],
    [b, c],
  ] as const) {
    const exact = jaccard(x, y);
    assert.ok(Math.abs(similarity(signature(x), signature(y)) - exact) < 0.15, `estimate vs exact ${exact}`);
  }
  assert.is(similarity(signature(a), signature(a)), 1);
  // Only the assistant's words count: the same reply under another prompt is the same.
  const other = ex(WORDS);
  other.messages[1].content = 'a completely different task statement';
  assert.equal([...shingles(other)], [...a]);
});

test('dedup keeps the best of each cluster of near-duplicates and every distinct example, in order', () => {
  const base = ex(WORDS, { rank: 1, source: 'base' });
  const nearBetter = ex([...WORDS.slice(0, 26), 'csv!'], { rank: 5, source: 'near-better' });
  const exact = ex(WORDS, { rank: 0, source: 'exact' });
  const distinct = ex([...WORDS].reverse(), { rank: 0, source: 'distinct' });
  const shortOne = ex(['ok'], { source: 'short' });
  assert.ok(jaccard(shingles(base), shingles(nearBetter)) >= 0.9);
  const { kept, removed } = dedup([base, nearBetter, exact, distinct, shortOne], 0.9);
  assert.equal(
    kept.map((e) => e.source),
    ['near-better', 'distinct', 'short'],
  );
  assert.is(removed, 2);
  // At threshold 1 only identical replies collapse.
  assert.equal(
    dedup([base, nearBetter, exact], 1).kept.map((e) => e.source),
    ['base', 'near-better'],
  );
});

test('the split is seeded, keeps a task on one side, and holds out about the fraction asked', () => {
  const xs = Array.from({ length: 40 }, (_, i) => ex(['w', String(i)], { group: `task${i % 10}`, source: String(i) }));
  const a = splitExamples(xs, 0.2, 7);
  const b = splitExamples(xs, 0.2, 7);
  assert.equal(
    a.val.map((e) => e.source),
    b.val.map((e) => e.source),
  );
  assert.is(a.val.length, 8);
  assert.is(a.train.length + a.val.length, 40);
  const valGroups = new Set(a.val.map((e) => e.group));
  assert.ok(a.train.every((e) => !valGroups.has(e.group)));
  assert.not.equal(
    splitExamples(xs, 0.2, 8).val.map((e) => e.source),
    a.val.map((e) => e.source),
  );
  assert.is(splitExamples(xs, 0, 7).val.length, 0);
  // One group cannot be split: it stays for training.
  assert.is(
    splitExamples(
      xs.map((e) => ({ ...e, group: 'one' })),
      0.5,
      1,
    ).val.length,
    0,
  );
  // A small positive fraction still holds out one group.
  assert.is(splitExamples(xs, 0.01, 7).val.length, 4);
});

test('learning-rate schedules: warmup, then constant, linear or cosine decay', () => {
  const lrs = (s: 'constant' | 'linear' | 'cosine', warm: number) =>
    Array.from({ length: 10 }, (_, k) => learningRate(k, 10, 1, s, warm));
  assert.equal(lrs('constant', 0), Array(10).fill(1));
  assert.equal(
    lrs('linear', 0).map((x) => Number(x.toFixed(3))),
    [1, 0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2, 0.1],
  );
  const cos = lrs('cosine', 2);
  assert.equal(cos.slice(0, 3), [0.5, 1, 1]);
  assert.ok(
    cos.slice(2).every((x, i, xs) => i === 0 || x < xs[i - 1]),
    'cosine decays after warmup',
  );
  assert.ok(Math.abs(cos[6] - 0.5) < 1e-9, 'half way through the decay, half the rate');
  assert.is(warmupSteps(0, 10), 0);
  assert.is(warmupSteps(0.01, 10), 1);
  assert.is(warmupSteps(1, 10), 10);
});

test.run();
