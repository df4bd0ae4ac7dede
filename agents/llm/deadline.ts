// A request's timeout counted from when the server started working on it,
// not from when it was sent. A trainer worker samples the chat requests
// waiting when a generate call starts in one batch, so a request sent while a
// batch runs waits for that batch first; a fixed timeout from the send (the
// SDK's) then fires on a live worker with a queue, and the retry queues the
// same work again. The worker reports each request by the `X-Request-Id` it
// came with (`GET {base}/requests/{id}`: queued, or running for so long); while
// the request waits the clock does not run, and once it runs the deadline is
// its start plus the timeout. A server that does not answer that path (vLLM,
// any other OpenAI-compatible one) keeps the plain deadline from the send, so
// nothing changes there. Polling rather than a kept-alive response leaves the
// HTTP status of every answer (507, 400) as it is.
import { randomUUID } from 'node:crypto';

export interface DeadlineOptions {
  /** The endpoint root (…/v1); undefined: never asked (OpenAI's own API). */
  endpoint?: string;
  timeoutMs: number;
  /** How often the server is asked, and the deadline checked. */
  pollMs: number;
}

/** The request's id, its signal (aborted at the deadline or with `outer`), whether the deadline fired, and `done` to stop watching. */
export interface Deadline {
  id: string;
  signal: AbortSignal;
  expired(): boolean;
  done(): void;
}

interface Status {
  state?: string;
  running_s?: number;
}

export function watchDeadline(o: DeadlineOptions, outer?: AbortSignal): Deadline {
  const id = randomUUID();
  const controller = new AbortController();
  const onOuter = () => controller.abort();
  outer?.addEventListener('abort', onOuter, { once: true });
  let deadline = Date.now() + o.timeoutMs;
  let expired = false;
  let asking = o.endpoint !== undefined;
  let inFlight = false;

  const ask = async () => {
    inFlight = true;
    try {
      const r = await fetch(`${o.endpoint!.replace(/\/$/, '')}/requests/${id}`, { signal: controller.signal });
      const body = (r.ok ? await r.json().catch(() => undefined) : undefined) as Status | undefined;
      if (!body || typeof body.state !== 'string') {
        asking = false; // this server reports no queue
        return;
      }
      const now = Date.now();
      if (body.state === 'queued') deadline = now + o.timeoutMs;
      else if (body.state === 'running' && typeof body.running_s === 'number')
        deadline = now - body.running_s * 1000 + o.timeoutMs;
      // 'unknown': answered a moment ago, or the worker restarted; the deadline stands.
    } catch {
      // Unreachable for a moment: the request itself fails if the server is gone.
    } finally {
      inFlight = false;
    }
  };

  // The deadline is checked more often than the server is asked, so a short timeout stays short.
  const tick = Math.max(20, Math.min(o.pollMs, o.timeoutMs / 10));
  let asked = Date.now();
  const timer = setInterval(() => {
    const now = Date.now();
    if (now >= deadline) {
      expired = true;
      controller.abort();
      clearInterval(timer);
      return;
    }
    if (asking && !inFlight && now - asked >= o.pollMs) {
      asked = now;
      void ask();
    }
  }, tick);
  timer.unref();

  return {
    id,
    signal: controller.signal,
    expired: () => expired,
    done() {
      clearInterval(timer);
      outer?.removeEventListener('abort', onOuter);
    },
  };
}
