// The one accepted test double: a local OpenAI-compatible HTTP server that
// replays scripted chat completions (and legacy completions, whose replies a
// script builds from the prompt: see echo.ts), counting requests and
// concurrency.
import { createServer, type Server, type ServerResponse } from 'node:http';

export interface Reply {
  status?: number;
  delayMs?: number;
  content?: string;
  headers?: Record<string, string>;
  usage?: { prompt_tokens: number; completion_tokens: number };
  /** The error's message when status is not 200. */
  message?: string;
  /** The whole response body, sent as it is (a legacy completion). */
  json?: unknown;
}

export interface ReplayServer {
  url: string;
  port: number;
  requests: Array<{
    model: string;
    messages: { role: string; content: string }[];
    temperature?: number;
    prompt?: string | string[];
    echo?: boolean;
    logprobs?: number;
    max_tokens?: number;
  }>;
  /** When each request arrived (performance.now(), ms), in the order of `requests`. */
  arrivals: number[];
  maxInFlight: number;
  /** Each chat request's `x-request-id`, in the order of `requests`. */
  requestIds: string[];
  /** Delayed replies whose client closed the connection before the answer. */
  abandoned: number;
  close(): Promise<void>;
}

export interface ReplayOptions {
  /** Answers `GET /v1/requests/{id}` as a trainer worker does (queued or running); absent: 404, as vLLM. */
  requestStatus?: (id: string) => unknown;
}

/** Waits `ms` before a reply, unless its client goes away first: that counts as abandoned, and the timer never
 * holds the test process open. */
function delayed(res: ServerResponse, ms: number, state: { abandoned: number }): Promise<void> {
  return new Promise<void>((r) => {
    const timer = setTimeout(r, ms);
    timer.unref();
    res.once('close', () => {
      clearTimeout(timer);
      if (!res.writableEnded) state.abandoned++;
      r();
    });
  });
}

/** Writes a scripted reply: an error status, raw JSON, or a chat completion (the `n`th request's) with usage. */
function writeReply(res: ServerResponse, reply: Reply, body: { model?: unknown }, n: number): void {
  const status = reply.status ?? 200;
  res.writeHead(status, { 'content-type': 'application/json', ...reply.headers });
  if (status !== 200) {
    res.end(JSON.stringify({ error: { message: reply.message ?? `scripted ${status}`, type: 'scripted' } }));
    return;
  }
  if (reply.json !== undefined) {
    res.end(JSON.stringify(reply.json));
    return;
  }
  const usage = reply.usage ?? { prompt_tokens: 10, completion_tokens: 5 };
  res.end(
    JSON.stringify({
      id: `chatcmpl-${n}`,
      object: 'chat.completion',
      created: 0,
      model: body.model,
      choices: [{ index: 0, message: { role: 'assistant', content: reply.content ?? '' }, finish_reason: 'stop' }],
      usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens },
    }),
  );
}

/** Replies in order; a function sees the request and chooses. The last reply repeats when the script runs out. */
export async function startReplayServer(
  script: Array<Reply | ((body: ReplayServer['requests'][number]) => Reply)>,
  opts: ReplayOptions = {},
): Promise<ReplayServer> {
  let inFlight = 0;
  let next = 0;
  const state: Omit<ReplayServer, 'url' | 'port' | 'close'> = {
    requests: [],
    arrivals: [],
    maxInFlight: 0,
    requestIds: [],
    abandoned: 0,
  };
  const server: Server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => (raw += c));
    // A scripted step that throws is the test's own mistake: it comes back as a 500 naming it, not as an
    // unhandled rejection that ends the test process.
    req.on('end', () => void answer().catch((err: unknown) => res.headersSent || res.writeHead(500).end(String(err))));
    const answer = async () => {
      // A status question (the client asks while it waits) is not a request in flight.
      const asked = req.method === 'GET' && opts.requestStatus ? /\/requests\/([^/?]+)$/.exec(req.url ?? '') : null;
      if (asked) {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(opts.requestStatus!(asked[1])));
        return;
      }
      if (req.method !== 'POST' || !req.url?.endsWith('/completions')) {
        res.writeHead(404).end();
        return;
      }
      inFlight++;
      state.maxInFlight = Math.max(state.maxInFlight, inFlight);
      try {
        const body = JSON.parse(raw);
        state.requests.push(body);
        state.arrivals.push(performance.now());
        state.requestIds.push(String(req.headers['x-request-id'] ?? ''));
        const step = script[Math.min(next++, script.length - 1)];
        const reply = typeof step === 'function' ? step(body) : step;
        if (reply.delayMs) await delayed(res, reply.delayMs, state);
        if (res.destroyed) return;
        writeReply(res, reply, body, state.requests.length);
      } finally {
        inFlight--;
      }
    };
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as { port: number }).port;
  return Object.assign(state, {
    url: `http://127.0.0.1:${port}/v1`,
    port,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  }) as ReplayServer;
}
