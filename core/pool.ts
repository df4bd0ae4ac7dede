// Work over a list with a bounded number of calls in flight: the stages'
// rollouts and evaluators run side by side, and their results keep the
// list's order, so outputs never depend on which call finished first.

/**
 * Calls `fn` on every item, at most `limit` at once, taking items in order.
 * Once `signal` aborts no new item is taken; those left out stay undefined in
 * the result. A call that throws stops the others taking items and rejects.
 */
export async function mapLimit<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T, index: number) => Promise<R>,
  signal?: AbortSignal,
): Promise<(R | undefined)[]> {
  const out = new Array<R | undefined>(items.length);
  let next = 0;
  let failed = false;
  const worker = async () => {
    while (next < items.length && !signal?.aborted && !failed) {
      const i = next++;
      try {
        out[i] = await fn(items[i], i);
      } catch (err) {
        failed = true;
        throw err;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
  return out;
}
