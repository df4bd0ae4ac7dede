// A small trainer worker for tests: the protocol's endpoints over HTTP, with
// an OpenAI-compatible generation endpoint that replies in ReAct's format
// (copy the sample submission, then answer) and counts its "weights" as the
// number of updates it has taken. It returns made-up token ids (unless told
// not to) and checks a batch's tokenizer against its own, as a worker does;
// `dieOnUpdate` makes it vanish in the middle of the first update, and
// `submits` chooses after which updates it makes a submission at all.
import { createServer, type Server } from 'node:http';

export interface TestWorker {
  url: string;
  batches: any[];
  saves: Array<{ step: number; tag: string }>;
  generations: number;
  close(): Promise<void>;
}

const REPLIES = [
  '<think>copy the sample</think>\n```python\nimport pandas as pd\npd.read_csv("public/sample_submission.csv").to_csv("submission.csv", index=False)\n```',
  '<think>done</think>\n<answer>submission.csv</answer>',
];

export interface TestWorkerOptions {
  /** Return prompt_token_ids and token_ids (default true). */
  tokens?: boolean;
  /** The tokenizer hash a batch must name (default: the one /health reports). */
  expectTokenizer?: string;
  dieOnUpdate?: boolean;
  /**
   * Whether the policy, after `updates` updates, copies the sample submission (default: always); otherwise it
   * answers at once, with no submission. A test gives validation passes a known best step this way.
   */
  submits?: (updates: number) => boolean;
}

const TOKENIZER = { tokenizer_sha256: 'a'.repeat(64), chat_template_sha256: 'b'.repeat(64) };

export async function startTestWorker(o: TestWorkerOptions = {}): Promise<TestWorker> {
  const state = { batches: [] as any[], saves: [] as Array<{ step: number; tag: string }>, generations: 0 };
  const server: Server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', () => {
      const json = (status: number, body: unknown) =>
        res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      if (req.method === 'GET' && req.url === '/health')
        return json(200, { status: 'ok', step: state.batches.length, model: 'test-policy', ...TOKENIZER });
      if (req.method === 'POST' && req.url === '/update') {
        const batch = JSON.parse(raw);
        if (o.dieOnUpdate) {
          req.socket.destroy();
          server.close();
          return;
        }
        const given = batch.tokenizer?.tokenizer_sha256;
        const want = o.expectTokenizer ?? TOKENIZER.tokenizer_sha256;
        if (given !== want)
          return json(409, {
            error: 'the batch was tokenised with another tokenizer',
            given: batch.tokenizer ?? null,
            worker: { ...TOKENIZER, tokenizer_sha256: want },
          });
        state.batches.push(batch);
        return json(200, { step: state.batches.length, loss: 0.5 / state.batches.length, tokens: 123 });
      }
      if (req.method === 'POST' && req.url === '/save') {
        const b = JSON.parse(raw);
        state.saves.push(b);
        return json(200, { path: `/ckpt/${b.tag}` });
      }
      if (req.method === 'POST' && req.url === '/v1/chat/completions') {
        const body = JSON.parse(raw);
        state.generations++;
        const turn = body.messages.filter((m: { role: string }) => m.role === 'assistant').length;
        const submits = o.submits?.(state.batches.length) ?? true;
        const content = REPLIES[submits ? Math.min(turn, REPLIES.length - 1) : REPLIES.length - 1];
        const logprobs = body.logprobs
          ? {
              content: content
                .split(' ')
                .slice(0, 3)
                .map((t: string) => ({ token: t, logprob: -0.5, bytes: null, top_logprobs: [] })),
            }
          : null;
        const ids =
          o.tokens === false || !logprobs ? {} : { token_ids: logprobs.content.map((_: unknown, i: number) => 7 + i) };
        const prompt = o.tokens === false ? {} : { prompt_token_ids: [1, 2, 3 + turn] };
        return json(200, {
          id: `gen-${state.generations}`,
          object: 'chat.completion',
          created: 0,
          model: body.model,
          choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop', logprobs, ...ids }],
          usage: { prompt_tokens: 50, completion_tokens: 10, total_tokens: 60 },
          ...prompt,
        });
      }
      json(404, { error: 'no such endpoint' });
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as { port: number }).port;
  return Object.assign(state, {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  }) as TestWorker;
}
