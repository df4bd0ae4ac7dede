// The worker scorer against a real tiny worker: a reply sampled as exact ids
// is teacher-forced whole and only its call's tokens come back, the same
// numbers /score gives those tokens; a text reply is tokenised after its
// prefix; an item past max_length is null.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spanTokens } from '../../agents/shaping/types.js';
import { startLocalWorker } from '../../gpu/trainer/local.js';
import { workerScorer } from './shaping/scorer.js';

const MESSAGES = [{ role: 'user' as const, content: 'the agent reads the public csv.' }];

test("sampled ids: the call's tokens by offset, as /score gives them; text after a prefix; overflow is null", async () => {
  const ckpt = await mkdtemp(join(tmpdir(), 'mlepipe-scorer-'));
  const w = await startLocalWorker({ model: { tiny: true }, ckptDir: ckpt, threads: 1, log: () => {} });
  try {
    const res = (await (
      await fetch(`${w.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ messages: MESSAGES, max_tokens: 24, seed: 5, logprobs: true }),
      })
    ).json()) as {
      choices: Array<{ message: { content: string }; token_ids: number[] }>;
    };
    const { content } = res.choices[0].message;
    const ids = res.choices[0].token_ids;
    assert.ok(content.length > 4, content);
    // The "call" is the second half of the reply's text.
    const cut = Math.floor(content.length / 2);
    const scorer = workerScorer(w.client, 100_000);
    const [exact] = await scorer.score([
      { messages: MESSAGES, prefix: content.slice(0, cut), reply: content.slice(cut), sampled: ids },
    ]);
    const [whole] = await w.client.score([{ messages: MESSAGES, token_ids: ids }], { offsets: true });
    const [a, b] = spanTokens(whole.offsets!, cut, content.length);
    assert.ok(b > a && b <= ids.length);
    assert.equal(exact, whole.logprobs.slice(a, b));
    // The tokens picked decode to text that holds the call and begins at most one token before it.
    assert.ok(whole.offsets![a] <= cut && (whole.offsets![a + 1] ?? Infinity) > cut);
    // Text: the worker tokenises the reply after the prefix; nothing is sampled, nothing is cut by offset.
    const [text] = await scorer.score([{ messages: MESSAGES, prefix: 'the model', reply: ' reads twelve features.' }]);
    assert.ok(text && text.length > 0 && text.every((x) => x <= 0));
    const [over] = await workerScorer(w.client, 8).score([{ messages: MESSAGES, reply: 'x' }]);
    assert.is(over, null);
  } finally {
    await w.stop();
    await rm(ckpt, { recursive: true, force: true });
  }
});

test.run();
