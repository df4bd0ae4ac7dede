// Which tasks an eval (or grpo) node works on: a folder named by `tasks:`,
// else the tasks/ of its upstream nodes, narrowed to a filter split.
import { readdir } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ParamError, UserError } from '../../core/errors.js';
import { readJson } from '../../core/json-files.js';
import { readJsonFile } from '../../core/text.js';
import { referenceChange, type Reference } from '../../tasks/references.js';
import type { InputNode, ParamIssue } from '../contract.js';

export interface TaskRef {
  id: string;
  dir: string;
}

export async function listTasks(opts: {
  tasks?: string;
  split: 'all' | 'train' | 'val';
  limit?: number;
  inputs: readonly InputNode[];
  experimentDir: string;
}): Promise<TaskRef[]> {
  const out: TaskRef[] = [];
  const add = async (folder: string, splitFile?: string) => {
    let keep: Set<string> | undefined;
    if (opts.split !== 'all') {
      if (!splitFile || !existsSync(splitFile)) throw new ParamError(['split'], noSplit('split', opts.split, folder));
      keep = new Set(((await readJsonFile(splitFile)) as Record<string, string[]>)[opts.split] ?? []);
    }
    for (const id of (await readdir(folder, { withFileTypes: true }))
      .filter((d) => d.isDirectory())
      .map((d) => d.name)
      .sort()) {
      if (keep && !keep.has(id)) continue;
      if (!existsSync(join(folder, id, 'private', 'evaluator.py'))) continue;
      await checkReferences(id, join(folder, id));
      out.push({ id, dir: join(folder, id) });
    }
  };
  if (opts.tasks) {
    const dir = resolve(opts.experimentDir, opts.tasks);
    if (!existsSync(dir)) throw new ParamError(['tasks'], noFolder(opts.tasks));
    // A folder of tasks, or one filter/generate output holding tasks/.
    if (existsSync(join(dir, 'tasks'))) await add(join(dir, 'tasks'), join(dir, 'split.json'));
    else await add(dir, join(dir, 'split.json'));
  } else {
    for (const input of opts.inputs)
      if (existsSync(join(input.dir, 'tasks'))) await add(join(input.dir, 'tasks'), join(input.dir, 'split.json'));
  }
  const seen = new Set<string>();
  const unique = out.filter((t) => !seen.has(t.id) && seen.add(t.id));
  return opts.limit ? unique.slice(0, opts.limit) : unique;
}

/** A task whose linked data (an MLE-bench competition's prepared folders) changed since it was made is refused. */
async function checkReferences(id: string, dir: string): Promise<void> {
  const refs =
    ((await readJsonFile(join(dir, 'task.json')).catch(() => ({}))) as { references?: Record<string, Reference> })
      .references ?? {};
  for (const [rel, ref] of Object.entries(refs)) {
    const change = await referenceChange(ref);
    if (change)
      throw new UserError(
        `task ${id}: its ${rel} links to ${ref.target}, which changed since the task was made (${change}); run the experiment again: the node that made the task sees the change and makes it afresh`,
      );
  }
}

const noFolder = (tasks: string) => `tasks: ${tasks} does not exist`;
const noSplit = (param: string, split: string, folder: string) =>
  `${param}: ${split} needs tasks from a filter stage (no split.json in ${folder})`;

/**
 * What listTasks would refuse about a `tasks:` folder, found before running:
 * it is missing, or a split is asked of it and it has no split.json.
 */
export function tasksFolderIssues(
  tasks: string | undefined,
  splits: Readonly<Record<string, string>>,
  experimentDir: string,
): ParamIssue[] {
  if (!tasks) return [];
  const dir = resolve(experimentDir, tasks);
  if (!existsSync(dir)) return [{ param: ['tasks'], message: noFolder(tasks) }];
  const splitFile = join(dir, 'split.json');
  return Object.entries(splits)
    .filter(([, split]) => split !== 'all' && !existsSync(splitFile))
    .map(([param, split]) => ({ param: [param], message: noSplit(param, split, dir), also: ['tasks'] }));
}

/** The spread of the starter's scores over its seeds (the SFT filter's margin), when the task records it. */
export async function starterStd(task: string): Promise<number | null> {
  try {
    const spec = await readJson<{ starter_std?: number }>(join(task, 'private', 'spec.json'));
    return typeof spec.starter_std === 'number' && Number.isFinite(spec.starter_std) ? spec.starter_std : null;
  } catch {
    return null;
  }
}

/** The starter baseline's score for MLToolBench's success (Eq. 5), when the task records one. */
export async function starterScore(task: string): Promise<number | null> {
  try {
    const spec = await readJson<{ starter_score?: number; baseline_scores?: { median?: number } }>(
      join(task, 'private', 'spec.json'),
    );
    // Procedural tasks: the starter is the majority-class / mean predictor.
    const v = spec.starter_score ?? spec.baseline_scores?.median;
    return typeof v === 'number' && Number.isFinite(v) ? v : null;
  } catch {
    return null;
  }
}
