// Counts of work and of what nodes hold, known before a run or only bounded (stages' `size`, the plan).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Count, OutputSize, SizeContext } from '../contract.js';

export const exactly = (n: number): Count => ({ n });

/** The product of counts: unknown if one is, a bound if one is. */
export function product(...counts: Count[]): Count {
  if (counts.some((c) => c === undefined)) return undefined;
  return bounded(
    counts.reduce((a, c) => a * c!.n, 1),
    counts,
  );
}

/** The sum of counts: unknown if one is (or there are none). */
export function total(counts: readonly Count[]): Count {
  if (!counts.length || counts.some((c) => c === undefined)) return undefined;
  return bounded(
    counts.reduce((a, c) => a + c!.n, 0),
    counts,
  );
}

/** `n`, a bound when one of the counts it was made from is. */
const bounded = (n: number, from: readonly Count[]): Count =>
  from.some((c) => c?.atMost) ? { n, atMost: true } : { n };

/** At most `limit` of a count (a `limit:` param): an unknown count becomes a bound. */
export function capped(c: Count, limit: number | undefined): Count {
  if (limit === undefined) return c;
  if (c === undefined) return { n: limit, atMost: true };
  return c.n <= limit ? c : c.atMost ? { n: limit, atMost: true } : { n: limit };
}

/** `12`, `≤ 12`, or `?` for a count not known until the inputs exist. */
export function countText(c: Count): string {
  if (!c) return '?';
  const n = Number.isInteger(c.n) ? c.n.toLocaleString('en-US') : c.n.toPrecision(2);
  return c.atMost ? `≤ ${n}` : n;
}

/** `12 tasks`, `1 repeat`, `? tasks`. */
export function counted(c: Count, one: string, many = `${one}s`): string {
  return `${countText(c)} ${c && c.n === 1 && !c.atMost ? one : many}`;
}

/**
 * The tasks a node reads: a `tasks:` folder (counted now, narrowed to a split by its split.json), else the
 * tasks (or the split) its inputs will hold; at most `limit` of them.
 */
export function tasksRead(
  p: { readonly tasks?: string; readonly split?: string; readonly limit?: number },
  ctx: SizeContext,
): Count {
  const split = p.split === 'train' || p.split === 'val' ? p.split : undefined;
  if (p.tasks) return capped(folderTasks(resolve(ctx.experimentDir, p.tasks), split), p.limit);
  // An input whose entry will hold tasks (or a split) has the key, its count undefined when unknown.
  const from = ctx.inputs.filter((i) => (split ? 'split' in i : 'tasks' in i));
  return capped(total(from.map((i) => (split ? i.split?.[split] : i.tasks))), p.limit);
}

/** Tasks in a folder of tasks (or an entry holding tasks/) as listTasks finds them; undefined when it is not there. */
export function folderTasks(dir: string, split?: 'train' | 'val'): Count {
  const inner = join(dir, 'tasks');
  const folder = existsSync(inner) ? inner : dir;
  if (!existsSync(folder)) return undefined;
  if (split) {
    const file = join(dir, 'split.json');
    if (!existsSync(file)) return undefined;
    const ids = readJsonOr(file)?.[split];
    return Array.isArray(ids) ? exactly(ids.length) : undefined;
  }
  const ids = readdirSync(folder, { withFileTypes: true }).filter(
    (d) => d.isDirectory() && existsSync(join(folder, d.name, 'private', 'evaluator.py')),
  );
  return exactly(ids.length);
}

/** What a finished entry holds: its tasks and split, counted (the plan reads a cached input's this way). */
export function entrySize(dir: string): OutputSize {
  const tasks = existsSync(join(dir, 'tasks')) ? folderTasks(dir) : undefined;
  const split = existsSync(join(dir, 'split.json'))
    ? { train: folderTasks(dir, 'train'), val: folderTasks(dir, 'val') }
    : undefined;
  const traj = join(dir, 'trajectories.jsonl');
  const trajectories = existsSync(traj)
    ? exactly(readFileSync(traj, 'utf8').split('\n').filter(Boolean).length)
    : undefined;
  return { ...(tasks ? { tasks } : {}), ...(split ? { split } : {}), ...(trajectories ? { trajectories } : {}) };
}

/** A JSON object file, or undefined where it does not parse: a size is a hint, the node reports the file itself. */
function readJsonOr(file: string): Record<string, unknown> | undefined {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
  } catch {
    return undefined;
  }
}
