// When and how long to wait before trying a request again: what the server asks for, else exponential backoff
// with jitter, never past a minute; and which failures are worth another try.
import type OpenAI from 'openai';

/** The longest wait between two tries, whether the server asks for more or the backoff grows past it. */
const MAX_DELAY_MS = 60_000;

/** The deadline of deadline.ts passed: retried like the SDK's timeout. */
export class DeadlineExpired extends Error {}

/** Waits `ms`, or rejects with the signal's reason as soon as it aborts (at once when it already has). */
export const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason as Error);
    const onAbort = () => {
      clearTimeout(t);
      reject(signal!.reason as Error);
    };
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });

/**
 * How long the server asks us to wait: OpenAI's `retry-after-ms`, else
 * `Retry-After` as seconds or an HTTP date. Undefined when neither is present
 * and valid, so that the caller backs off instead of retrying at once.
 */
export function retryAfterMs(
  headers: { get(name: string): string | null } | undefined,
  now = Date.now(),
): number | undefined {
  const ms = headers?.get('retry-after-ms')?.trim();
  if (ms && /^\d+(\.\d+)?$/.test(ms)) return Math.min(Number(ms), MAX_DELAY_MS);
  const after = headers?.get('retry-after')?.trim();
  if (!after) return undefined;
  if (/^\d+(\.\d+)?$/.test(after)) return Math.min(Number(after) * 1000, MAX_DELAY_MS);
  // An HTTP date starts with the day's name; Date.parse alone would take "-3" for a year.
  const date = /^[A-Za-z]{3}/.test(after) ? Date.parse(after) : NaN;
  return Number.isFinite(date) ? Math.min(Math.max(0, date - now), MAX_DELAY_MS) : undefined;
}

/** Exponential backoff: `base·2^attempt` plus up to as much again of jitter, capped. */
export function backoffMs(attempt: number, base: number): number {
  const step = Math.min(base * 2 ** attempt, MAX_DELAY_MS / 2);
  return step + Math.random() * step;
}

/** Whether a failed try is worth another (timeouts, lost connections, 429 and 5xx), and how to name it. */
export function classify(Sdk: typeof OpenAI, err: unknown): { retry: boolean; text: string; retryAfterMs?: number } {
  if (err instanceof Sdk.APIConnectionTimeoutError || err instanceof DeadlineExpired)
    return { retry: true, text: 'timed out' };
  if (err instanceof Sdk.APIConnectionError)
    return { retry: true, text: `connection failed (${(err.cause as Error | undefined)?.message ?? err.message})` };
  if (err instanceof Sdk.APIError) {
    // instanceof leaves APIError's type parameters as any: these are its defaults.
    const status = (err.status as number | undefined) ?? 0;
    const retryAfter = retryAfterMs(err.headers as Headers | undefined);
    if (status === 429 || status >= 500) return { retry: true, text: `HTTP ${status}`, retryAfterMs: retryAfter };
    return { retry: false, text: `HTTP ${status}: ${err.message}` };
  }
  return { retry: false, text: (err as Error).message };
}
