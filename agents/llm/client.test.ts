import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EnvError } from '../../core/errors.js';
import { closedPort } from '../../test/helpers.js';
import { startReplayServer } from '../../test/llm/replay-server.js';
import { LlmClient, replyTokens, retryAfterMs } from './client.js';
import { resolveModel } from '../../core/models.js';

const msgs = [{ role: 'user' as const, content: 'hello' }];
const client = (url: string, extra: Record<string, unknown> = {}, cacheDir?: string) =>
  new LlmClient({
    name: 'tiny',
    spec: resolveModel({ provider: 'openai', base_url: url, model: 'tiny-model', timeout_s: 2, ...extra }),
    cacheDir,
    baseDelayMs: 20,
    pollMs: 100,
  });

test('a chat call through the real openai client: content, usage, cost', async () => {
  const s = await startReplayServer([{ content: 'hi there', usage: { prompt_tokens: 1000, completion_tokens: 500 } }]);
  try {
    const c = client(s.url, { temperature: 0.3, price_in_per_1m: 2, price_out_per_1m: 8 });
    const r = await c.chat({ messages: msgs });
    assert.equal(r, { content: 'hi there', usage: { prompt_tokens: 1000, completion_tokens: 500 }, cached: false });
    assert.is(s.requests[0].model, 'tiny-model');
    assert.is(s.requests[0].temperature, 0.3);
    assert.is(c.usage.cost_usd, (1000 * 2 + 500 * 8) / 1e6);
  } finally {
    await s.close();
  }
});

test('429 (with Retry-After), 500 and a slow response are retried', async () => {
  const s = await startReplayServer([
    { status: 429, headers: { 'retry-after': '0' } },
    { status: 503 },
    { content: 'late', delayMs: 3000 },
    { content: 'ok' },
  ]);
  try {
    const c = client(s.url, { timeout_s: 0.5 });
    const r = await c.chat({ messages: msgs });
    assert.is(r.content, 'ok');
    assert.is(s.requests.length, 4);
    assert.is(c.usage.retries, 3);
  } finally {
    await s.close();
  }
});

const gaps = (t: number[]) => t.slice(1).map((x, i) => x - t[i]);

test('a 5xx or 429 without Retry-After backs off exponentially instead of retrying at once', async () => {
  const s = await startReplayServer([
    { status: 503 },
    { status: 500 },
    { status: 429 },
    { status: 503 },
    { content: 'ok' },
  ]);
  try {
    const c = client(s.url);
    assert.is((await c.chat({ messages: msgs })).content, 'ok');
    const g = gaps(s.arrivals);
    assert.is(g.length, 4);
    // baseDelayMs is 20: attempt n waits at least 20·2^n ms (timers may fire up to 1 ms early).
    g.forEach((gap, n) =>
      assert.ok(gap >= 20 * 2 ** n - 1, `gap ${n} was ${gap.toFixed(1)} ms, expected ≥ ${20 * 2 ** n}`),
    );
    assert.ok(g[3] > g[0], `gaps grow: ${g.map((x) => x.toFixed(0)).join(', ')} ms`);
  } finally {
    await s.close();
  }
});

test('an invalid Retry-After is ignored (backoff); a valid retry-after-ms or Retry-After is honoured', async () => {
  const s = await startReplayServer([
    { status: 503, headers: { 'retry-after': 'soon' } },
    { status: 429, headers: { 'retry-after-ms': '150' } },
    { status: 429, headers: { 'retry-after': '1' } },
    { content: 'ok' },
  ]);
  try {
    const c = client(s.url);
    assert.is((await c.chat({ messages: msgs })).content, 'ok');
    const g = gaps(s.arrivals);
    assert.ok(g[0] >= 19, `invalid header: backoff, got ${g[0].toFixed(1)} ms`);
    assert.ok(g[1] >= 149, `retry-after-ms: 150 honoured, got ${g[1].toFixed(1)} ms`);
    assert.ok(g[2] >= 999, `Retry-After: 1 honoured, got ${g[2].toFixed(1)} ms`);
  } finally {
    await s.close();
  }
});

test('an abort during a backoff stops at once, without another request', async () => {
  const s = await startReplayServer([{ status: 503 }]);
  try {
    const c = new LlmClient({
      name: 'tiny',
      spec: resolveModel({ provider: 'openai', base_url: s.url, model: 'tiny-model', timeout_s: 2 }),
      baseDelayMs: 600_000,
    });
    const ac = new AbortController();
    const call = c.chat({ messages: msgs }, ac.signal);
    while (s.requests.length === 0) await new Promise((r) => setTimeout(r, 5));
    await new Promise((r) => setTimeout(r, 20));
    ac.abort();
    await call.then(
      () => assert.unreachable('should have been aborted'),
      (err) => assert.match((err as Error).message, /abort/i),
    );
    assert.is(s.requests.length, 1);
    // Already aborted before the call: no request at all.
    const before = s.requests.length;
    await c.chat({ messages: msgs }, AbortSignal.abort()).then(
      () => assert.unreachable(),
      () => undefined,
    );
    assert.is(s.requests.length, before);
  } finally {
    await s.close();
  }
});

test('retryAfterMs: milliseconds, seconds or an HTTP date, capped; absent or invalid is undefined', () => {
  const h = (o: Record<string, string>) => new Headers(o);
  const now = Date.parse('2025-01-01T00:00:00Z');
  assert.is(retryAfterMs(h({})), undefined);
  assert.is(retryAfterMs(undefined), undefined);
  assert.is(retryAfterMs(h({ 'retry-after': '' })), undefined);
  assert.is(retryAfterMs(h({ 'retry-after': '-3' })), undefined);
  assert.is(retryAfterMs(h({ 'retry-after': 'soon' })), undefined);
  assert.is(retryAfterMs(h({ 'retry-after': '2' })), 2000);
  assert.is(retryAfterMs(h({ 'retry-after': '0' })), 0);
  assert.is(retryAfterMs(h({ 'retry-after-ms': '250', 'retry-after': '9' })), 250);
  assert.is(retryAfterMs(h({ 'retry-after-ms': 'x', 'retry-after': '9' })), 9000);
  assert.is(retryAfterMs(h({ 'retry-after': 'Wed, 01 Jan 2025 00:00:05 GMT' }), now), 5000);
  assert.is(retryAfterMs(h({ 'retry-after': 'Tue, 31 Dec 2024 23:00:00 GMT' }), now), 0);
  assert.is(retryAfterMs(h({ 'retry-after': '86400' })), 60_000);
});

test('a client error (400) fails at once, naming the endpoint and status', async () => {
  const s = await startReplayServer([{ status: 400 }]);
  try {
    await client(s.url).chat({ messages: msgs });
    assert.unreachable();
  } catch (err) {
    assert.match((err as Error).message, `model "tiny" (tiny-model) at ${s.url}: HTTP 400`);
    assert.is(s.requests.length, 1);
  } finally {
    await s.close();
  }
});

test('a server that stays overloaded through every retry is an environment error; a 400 is not', async () => {
  const s = await startReplayServer([{ status: 503 }]);
  try {
    await client(s.url).chat({ messages: msgs });
    assert.unreachable();
  } catch (err) {
    assert.instance(err, EnvError);
    assert.match((err as Error).message, 'kept failing: HTTP 503 after 5 tries');
    assert.is(s.requests.length, 5);
  } finally {
    await s.close();
  }
  // The entry's retries: sets how many tries follow the first.
  const once = await startReplayServer([{ status: 503 }]);
  try {
    await client(once.url, { retries: 1 }).chat({ messages: msgs });
    assert.unreachable();
  } catch (err) {
    assert.match((err as Error).message, 'kept failing: HTTP 503 after 2 tries');
    assert.is(once.requests.length, 2);
  } finally {
    await once.close();
  }
  const bad = await startReplayServer([{ status: 400 }]);
  try {
    await client(bad.url).chat({ messages: msgs });
    assert.unreachable();
  } catch (err) {
    assert.not.instance(err, EnvError);
  } finally {
    await bad.close();
  }
});

test('an unreachable endpoint fails fast with a message that names it', async () => {
  const port = await closedPort();
  const url = `http://127.0.0.1:${port}/v1`;
  const c = client(url);
  try {
    await c.chat({ messages: msgs });
    assert.unreachable();
  } catch (err) {
    assert.instance(err, EnvError);
    assert.match((err as Error).message, `cannot reach model "tiny" (tiny-model) at ${url}`);
    assert.ok(c.usage.retries <= 4, `gave up after ${c.usage.retries} retries`);
  }
});

test('the response cache: a rerun replays finished calls without a request; another sample asks again', async () => {
  const s = await startReplayServer([(body) => ({ content: `echo ${body.messages[0].content}` })]);
  const dir = await mkdtemp(join(tmpdir(), 'mlepipe-llm-cache-'));
  try {
    const a = await client(s.url, {}, dir).chat({ messages: msgs, sample: 0 });
    assert.is(a.cached, false);
    const rerun = client(s.url, {}, dir);
    const b = await rerun.chat({ messages: msgs, sample: 0 });
    assert.equal([b.content, b.cached, s.requests.length], ['echo hello', true, 1]);
    assert.is(rerun.usage.requests, 0);
    await rerun.chat({ messages: msgs, sample: 1 });
    assert.is(s.requests.length, 2);
    // Where the model is served does not matter to the cache; the model id does.
    assert.is(client('http://elsewhere/v1', {}, dir).cacheKey({ messages: msgs }), rerun.cacheKey({ messages: msgs }));
    assert.is.not(
      client(s.url, { model: 'other' }, dir).cacheKey({ messages: msgs }),
      rerun.cacheKey({ messages: msgs }),
    );
  } finally {
    await s.close();
  }
});

test('at most `concurrency` requests in flight per model', async () => {
  const s = await startReplayServer([{ content: 'x', delayMs: 100 }]);
  try {
    const c = client(s.url, { concurrency: 2 });
    await Promise.all(Array.from({ length: 6 }, (_, i) => c.chat({ messages: [{ role: 'user', content: `q${i}` }] })));
    assert.is(s.requests.length, 6);
    assert.is(s.maxInFlight, 2);
  } finally {
    await s.close();
  }
});

test('a missing API key variable is an environment error', () => {
  assert.throws(
    () =>
      new LlmClient({
        name: 'hosted',
        spec: resolveModel({ provider: 'openai', model: 'm', api_key_env: 'MLEPIPE_NO_SUCH_KEY' }),
        env: {},
      }),
    /MLEPIPE_NO_SUCH_KEY/,
  );
});

test('replyTokens: the prompt and reply ids with one logprob each, or nothing when any part is missing', () => {
  const r = { prompt_token_ids: [5, 6], choices: [{ token_ids: [7, 8] }] };
  assert.equal(replyTokens(r, [-0.1, -0.2]), { prompt_ids: [5, 6], token_ids: [7, 8], logprobs: [-0.1, -0.2] });
  // vLLM may put the prompt's ids on the choice.
  assert.equal(replyTokens({ choices: [{ token_ids: [7], prompt_token_ids: [1] }] }, [-1]), {
    prompt_ids: [1],
    token_ids: [7],
    logprobs: [-1],
  });
  assert.is(replyTokens(r, [-0.1]), undefined);
  assert.is(replyTokens({ choices: [{ token_ids: [7, 8] }] }, [-0.1, -0.2]), undefined);
  assert.is(replyTokens({ prompt_token_ids: [5], choices: [{}] }, []), undefined);
  assert.is(replyTokens({ prompt_token_ids: [5, -1], choices: [{ token_ids: [7] }] }, [-0.1]), undefined);
});

test("a request queued behind a worker's batch does not time out; its clock starts when the worker starts it", async () => {
  // The worker reports the request queued for its first 1.2 s, then running; the answer comes at 1.5 s, well
  // past timeout_s (0.6 s) from the send but 0.3 s after the worker started it.
  const sent = Date.now();
  const s = await startReplayServer([{ content: 'answered', delayMs: 1500 }], {
    requestStatus: (id) => {
      const t = (Date.now() - sent) / 1000;
      return t < 1.2
        ? { id, state: 'queued', queued_s: t }
        : { id, state: 'running', queued_s: 1.2, running_s: t - 1.2 };
    },
  });
  try {
    const c = client(s.url, { timeout_s: 0.6 });
    const { content } = await c.chat({ messages: msgs });
    assert.equal(
      { content, retries: c.usage.retries, sent: s.requests.length },
      { content: 'answered', retries: 0, sent: 1 },
    );
    assert.match(s.requestIds[0], /^[0-9a-f-]{36}$/);
  } finally {
    await s.close();
  }
});

test('a request the worker has run past timeout_s is abandoned (the connection closed) and retried under a new id', async () => {
  const s = await startReplayServer([{ content: 'late', delayMs: 5000 }, { content: 'ok' }], {
    requestStatus: (id) => ({ id, state: 'running', queued_s: 0, running_s: 10 }),
  });
  try {
    const c = client(s.url);
    const r = await c.chat({ messages: msgs });
    assert.is(r.content, 'ok');
    assert.is(c.usage.retries, 1);
    assert.is(s.requests.length, 2);
    assert.is.not(s.requestIds[0], s.requestIds[1]);
    // The first try's connection was closed, which is what tells a worker to drop its work.
    assert.is(s.abandoned, 1);
  } finally {
    await s.close();
  }
});

test('a forced function call: the tool and tool_choice are sent, the call arguments come back and are cached', async () => {
  const args = '{"is_bug": false, "summary": "ok", "metric": 0.5, "lower_is_better": true}';
  const s = await startReplayServer([
    {
      json: {
        id: 'c1',
        object: 'chat.completion',
        created: 0,
        model: 'tiny-model',
        choices: [
          {
            index: 0,
            finish_reason: 'tool_calls',
            message: {
              role: 'assistant',
              content: null,
              tool_calls: [{ id: 't1', type: 'function', function: { name: 'submit_review', arguments: args } }],
            },
          },
        ],
        usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 },
      },
    },
  ]);
  const tool = { name: 'submit_review', description: 'review', parameters: { type: 'object', properties: {} } };
  try {
    const dir = await mkdtemp(join(tmpdir(), 'mlepipe-tool-'));
    const r = await client(s.url, {}, dir).chat({ messages: msgs, tool });
    assert.is(r.tool_arguments, args);
    const sent = s.requests[0] as unknown as { tools: unknown; tool_choice: unknown };
    assert.equal(sent.tools, [{ type: 'function', function: tool }]);
    assert.equal(sent.tool_choice, { type: 'function', function: { name: 'submit_review' } });
    const again = await client(s.url, {}, dir).chat({ messages: msgs, tool });
    assert.equal([again.cached, again.tool_arguments], [true, args]);
    // The same messages without the tool are another request.
    assert.is(client(s.url).cacheKey({ messages: msgs }) === client(s.url).cacheKey({ messages: msgs, tool }), false);
  } finally {
    await s.close();
  }
});

test.run();
