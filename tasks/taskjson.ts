// task.json (docs/tasks.md): what the task is, plus the digest of every file, so
// a copy can be checked against what was generated or imported; and the line a
// folder of tasks lists for each.
import { existsSync } from 'node:fs';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { listFiles } from '../core/fs.js';
import { readJsonFile } from '../core/text.js';

export async function writeTaskJson(dest: string, fields: Record<string, unknown>): Promise<void> {
  const files = await listFiles(dest, (rel) => rel === 'task.json');
  const task = { ...fields, files: Object.fromEntries(files.map((f) => [f.path, f.sha256])) };
  await writeFile(join(dest, 'task.json'), JSON.stringify(task, null, 2) + '\n');
}

/** One task of a folder of tasks, in a line: what `task show` lists for a folder. */
export interface TaskSummary {
  readonly id: string;
  /** The task type where the task names one (`tabular-classification`), else what made it (`mltoolbench-import`). */
  readonly kind: string;
  readonly modality?: string;
  readonly metric?: string;
  /** The scenario, else the first line of public/description.md. */
  readonly description: string;
  readonly dir: string;
}

/**
 * The tasks in `folder`: each subfolder with a task.json, or those of its tasks/ (a generate or filter node's
 * entry); sorted by id. Empty when there are none. A task.json that is not JSON is a positioned error.
 */
export async function tasksIn(folder: string): Promise<TaskSummary[]> {
  const inner = join(folder, 'tasks');
  const from = existsSync(join(folder, 'task.json')) || !existsSync(inner) ? folder : inner;
  const subs = (await readdir(from, { withFileTypes: true })).filter((d) => d.isDirectory()).map((d) => d.name);
  const out: TaskSummary[] = [];
  for (const name of subs.sort()) {
    const dir = join(from, name);
    if (existsSync(join(dir, 'task.json'))) out.push(await summary(dir, name));
  }
  return out;
}

async function summary(dir: string, name: string): Promise<TaskSummary> {
  const t = (await readJsonFile(join(dir, 'task.json'))) as Record<string, unknown>;
  const text = (v: unknown) => (typeof v === 'string' && v ? v : undefined);
  const domain = t.domain as { scenario?: unknown } | undefined;
  return {
    id: text(t.id) ?? name,
    kind: text(t.task_type) ?? text(t.generator) ?? text(t.template) ?? '?',
    modality: text(t.modality),
    metric: text(t.metric),
    description: text(domain?.scenario) ?? (await firstLine(join(dir, 'public', 'description.md'))),
    dir,
  };
}

/** The first non-empty line of a markdown file, its heading marks dropped; '' when there is none. */
async function firstLine(path: string): Promise<string> {
  if (!existsSync(path)) return '';
  const line = (await readFile(path, 'utf8')).split('\n').find((l) => l.trim()) ?? '';
  return line.replace(/^#+\s*/, '').trim();
}
