// How much work a filter node is: every task it reads graded once more; it keeps at most those, split.
import type { SizeContext, WorkSize } from '../contract.js';
import { tasksRead } from '../shared/size.js';
import type { FilterParams } from './index.js';

export function filterSize(p: FilterParams, ctx: SizeContext): WorkSize {
  const read = tasksRead({}, ctx);
  const kept = read && { n: read.n, atMost: true };
  const val = read && {
    n: Math.min(read.n, p.val >= 1 ? Math.floor(p.val) : Math.round(read.n * p.val)),
    atMost: true,
  };
  const rest = read && val && read.n - val.n;
  const train =
    rest === undefined ? undefined : { n: p.train === undefined ? rest : Math.min(rest, p.train), atMost: true };
  return { work: [{ n: read, unit: 'tasks graded' }], gpus: 0, gives: { tasks: kept, split: { train, val } } };
}
