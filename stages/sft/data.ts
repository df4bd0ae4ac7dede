// Which of the sft stage's examples it trains on: those that pass its filters, split into train and
// validation by task.
import { Rng } from '../../core/random.js';
import type { Example } from './examples.js';

export interface Filters {
  success: boolean;
  min_reward?: number;
  valid_submission: boolean;
}

/** Keeps what passes every filter; an example without the field a filter reads does not pass it. */
export function applyFilters(
  examples: readonly Example[],
  f: Filters,
): { kept: Example[]; dropped: Record<string, number> } {
  const dropped = { success: 0, min_reward: 0, valid_submission: 0 };
  const failed = (e: Example): keyof typeof dropped | undefined => {
    if (f.success && e.success !== true) return 'success';
    if (f.min_reward !== undefined && !(typeof e.reward === 'number' && e.reward >= f.min_reward)) return 'min_reward';
    if (f.valid_submission && e.valid !== true) return 'valid_submission';
    return undefined;
  };
  const kept = examples.filter((e) => {
    const why = failed(e);
    if (why) dropped[why]++;
    return !why;
  });
  return { kept, dropped };
}

/**
 * A seeded split by group (a task's trajectories stay together): groups are
 * shuffled and moved to validation until it holds `fraction` of the examples
 * (at least one group when there are two or more and fraction > 0).
 */
export function splitExamples(
  examples: readonly Example[],
  fraction: number,
  seed: number,
): { train: Example[]; val: Example[] } {
  const groups = new Map<string, Example[]>();
  for (const e of examples) groups.set(e.group, [...(groups.get(e.group) ?? []), e]);
  const order = new Rng('sft-split', seed).shuffle([...groups.keys()].sort());
  const want = Math.round(examples.length * fraction);
  const val = new Set<string>();
  let n = 0;
  if (fraction > 0 && order.length >= 2) {
    for (const g of order) {
      // Training keeps at least one group; validation gets at least one.
      if (val.size === order.length - 1 || (val.size > 0 && n >= want)) break;
      val.add(g);
      n += groups.get(g)!.length;
    }
  }
  return { train: examples.filter((e) => !val.has(e.group)), val: examples.filter((e) => val.has(e.group)) };
}
