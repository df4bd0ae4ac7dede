// The prompt-log-probability scorer against a local OpenAI-compatible server
// whose echoed log-probabilities are a fixed table: the prompt is the ChatML
// text, the reply's tokens are picked by offset (a token straddling the
// reasoning counts, the generated one never does, a begin-of-text token the
// server counts in the offsets is allowed for), SPICE's d equals the
// difference worked out from the table, a prompt past the server's context
// scores null (zero shaping), and other failures name the model and URL.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { LlmClient, type ChatMessage } from '../llm/client.js';
import { echoLogprob, echoReply, echoTokens } from '../../test/llm/echo.js';
import { startReplayServer } from '../../test/llm/replay-server.js';
import type { TurnRecord } from '../scaffolds/types.js';
import { itemPrompt, promptScorer, renderChat } from './prompt-scorer.js';
import { referenceMessage, spiceTurns } from './spice.js';
import { resolveModel } from '../../core/models.js';

const client = (url: string, name = 'judge') =>
  new LlmClient({
    name,
    spec: resolveModel({ provider: 'openai', base_url: url, model: 'judge-7b', timeout_s: 30 }),
    maxRetries: 1,
    baseDelayMs: 1,
  });
const close = (a: number, b: number) => assert.ok(Math.abs(a - b) < 1e-12, `${a} vs ${b}`);

/** The table's log-probabilities of the tokens of `text` that overlap [from, to), by the fixture's own tokenizer. */
function byHand(text: string, from: number, to: number): number[] {
  const toks = echoTokens(text);
  return toks.flatMap((t, i) => {
    const end = toks[i + 1]?.offset ?? text.length;
    return t.offset < to && end > from ? [echoLogprob(t.token, i)] : [];
  });
}

test("ChatML and Llama 3 text; the reply's tokens by offset, a straddling token included, the generated one left out", async () => {
  const messages: ChatMessage[] = [
    { role: 'system', content: 'S' },
    { role: 'user', content: 'go' },
  ];
  assert.is(
    renderChat(messages, 'chatml'),
    '<|im_start|>system\nS<|im_end|>\n<|im_start|>user\ngo<|im_end|>\n<|im_start|>assistant\n',
  );
  assert.is(
    renderChat(messages, 'llama3'),
    '<|start_header_id|>system<|end_header_id|>\n\nS<|eot_id|><|start_header_id|>user<|end_header_id|>\n\ngo<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n',
  );
  const server = await startReplayServer([echoReply()]);
  try {
    const scorer = promptScorer(client(server.url), { template: 'chatml', maxLength: 1000 });
    // "ab" + "cd x": the server sees one token "abcd", which holds the call's first characters.
    const item = { messages, prefix: 'ab', reply: 'cd x' };
    const [lp] = await scorer.score([item]);
    const head = '<|im_start|>system\nS<|im_end|>\n<|im_start|>user\ngo<|im_end|>\n<|im_start|>assistant\n';
    assert.is(server.requests[0].prompt![0], `${head}abcd x`);
    assert.equal([server.requests[0].echo, server.requests[0].logprobs, server.requests[0].max_tokens], [true, 1, 1]);
    // Tokens 15.. of the text: "abcd", " ", "x" (the 15 before them are the rendered chat).
    assert.is(echoTokens(head).length, 15);
    assert.equal(lp, [echoLogprob('abcd', 15), echoLogprob(' ', 16), echoLogprob('x', 17)]);
    // Astral characters: the server's offsets count code points, the reply is still found.
    const emoji = { messages, prefix: '😀 ', reply: 'ok' };
    const [e] = await scorer.score([emoji]);
    const p = itemPrompt(emoji, 'chatml');
    assert.equal(e, byHand(p.text, p.from, p.to));
    assert.equal(e, [echoLogprob('ok', 17)]);
    // A prompt longer than max_length tokens scores null without the server refusing it.
    const [short] = await promptScorer(client(server.url), { template: 'chatml', maxLength: 10 }).score([item]);
    assert.is(short, null);
  } finally {
    await server.close();
  }
  // A server that adds a begin-of-text token and counts it in the offsets: the same characters are picked.
  const bos = await startReplayServer([echoReply(Infinity, '<|begin_of_text|>')]);
  try {
    const [lp] = await promptScorer(client(bos.url), { template: 'llama3', maxLength: 1000 }).score([
      { messages: [{ role: 'user', content: 'go' }], prefix: 'ab', reply: 'cd x' },
    ]);
    const head = renderChat([{ role: 'user', content: 'go' }], 'llama3');
    const n = echoTokens(head).length + 1;
    assert.equal(lp, [echoLogprob('abcd', n), echoLogprob(' ', n + 1), echoLogprob('x', n + 2)]);
  } finally {
    await bos.close();
  }
});

const turn = (action: TurnRecord['action']): TurnRecord => ({
  turn: 0,
  action,
  observation: '',
  exit_code: 0,
  timed_out: false,
  duration_ms: 0,
  format_ok: true,
});
const CALL = '```python\nprint(open("train.csv").read()[:200])\n```';
const EP = {
  scaffold: 'react',
  messages: [
    { role: 'system', content: 'You solve ML tasks.' },
    { role: 'user', content: 'Task: predict the label.' },
    { role: 'assistant', content: `<think>look at the data</think>\n${CALL}` },
    { role: 'user', content: 'label,x\n1,2' },
    { role: 'assistant', content: '<answer>done</answer>' },
  ] as ChatMessage[],
  turns: [turn('code'), turn('answer')],
};

test("SPICE d on a hand-built trajectory equals the difference of the table's log-probabilities; overflow is null", async () => {
  const server = await startReplayServer([echoReply()]);
  try {
    const summaries = ['inspect the csv first', 'fit a forest'];
    const [s] = await spiceTurns(
      EP,
      summaries,
      promptScorer(client(server.url), { template: 'chatml', maxLength: 100_000, batch: 2 }),
    );
    const history = EP.messages.slice(0, 2);
    const prefix = '<think>look at the data</think>\n';
    const branch = (extra: ChatMessage[]) => {
      const head = renderChat([...history, ...extra], 'chatml') + prefix;
      return byHand(head + CALL, head.length, head.length + CALL.length);
    };
    const plain = branch([]);
    assert.ok(plain.length > 10);
    const conditioned = summaries.map((c) => branch([referenceMessage(c)]));
    const d =
      conditioned.map((lp) => lp.reduce((a, x, u) => a + x - plain[u], 0) / lp.length).reduce((a, x) => a + x, 0) / 2;
    assert.is(s.turn, 0);
    assert.ok(s.d !== null && Math.abs(d) > 1e-6, `d = ${s.d}`);
    close(s.d!, d);
    // Three items in batches of two: two requests, the observation and the answer never sent.
    assert.equal(
      server.requests.map((r) => (r.prompt as string[]).length),
      [2, 1],
    );
    for (const r of server.requests)
      for (const p of r.prompt as string[]) assert.not.ok(p.includes('label,x') || p.includes('<answer>'));
  } finally {
    await server.close();
  }
  // The server's context holds the plain branch but not the reference message around even one word of the
  // summary: the summary is cut by bisection (its first 2 words, then 1; each a batch of one, refused, then
  // retried alone), none fits, the reference is left out, and with none left the call is unscored (zero
  // shaping); the first batch is retried one item at a time.
  const plainTokens = echoTokens(
    itemPrompt(
      { messages: EP.messages.slice(0, 2), prefix: '<think>look at the data</think>\n', reply: CALL },
      'chatml',
    ).text,
  ).length;
  const tight = await startReplayServer([echoReply(plainTokens + 1)]);
  try {
    const [s] = await spiceTurns(
      EP,
      ['inspect the csv first'],
      promptScorer(client(tight.url), { template: 'chatml', maxLength: 100_000 }),
    );
    assert.equal(s, { turn: 0, category: 'execution', d: null, reason: 'overflow' });
    assert.equal(
      tight.requests.map((r) => (r.prompt as string[]).length),
      [2, 1, 1, 1, 1, 1, 1],
    );
  } finally {
    await tight.close();
  }
});

test('other failures name the model and its URL; an unreachable server is an environment problem', async () => {
  const server = await startReplayServer([{ status: 404, message: 'The model `judge-7b` does not exist.' }]);
  try {
    const err = await promptScorer(client(server.url), { template: 'chatml', maxLength: 100 })
      .score([{ messages: [{ role: 'user', content: 'x' }], reply: 'y' }])
      .catch((e: Error) => e);
    assert.instance(err, Error);
    assert.match((err as Error).message, `model "judge" (judge-7b) at ${server.url}: HTTP 404`);
  } finally {
    await server.close();
  }
  // Echo without log-probabilities (a server that ignores echo): a clear failure, not empty scores.
  const bare = await startReplayServer([
    {
      json: {
        id: 'x',
        object: 'text_completion',
        created: 0,
        model: 'judge-7b',
        choices: [{ index: 0, text: 'y', logprobs: null, finish_reason: 'length' }],
      },
    },
  ]);
  try {
    const err = await promptScorer(client(bare.url), { template: 'chatml', maxLength: 100 })
      .score([{ messages: [{ role: 'user', content: 'x' }], reply: 'y' }])
      .catch((e: Error) => e);
    assert.match((err as Error).message, /judge.*returned no token log-probabilities/);
  } finally {
    await bare.close();
  }
});

test.run();
