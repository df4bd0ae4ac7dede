// A node that resumes says so before its work: of the items it will produce, how many an earlier attempt
// of the same key finished (they are taken as they are, not run again).
import type { StageContext } from '../contract.js';

type Ctx = Pick<StageContext<unknown>, 'items' | 'resumed'>;

/** Counts which of `ids` have a finished item and tells the run when there are any; returns the count. */
export async function announceKept(ctx: Ctx, ids: readonly string[], unit: string): Promise<number> {
  const finished = new Set(await ctx.items.list());
  const kept = ids.filter((id) => finished.has(id)).length;
  if (kept) ctx.resumed({ kept, total: ids.length, unit });
  return kept;
}
