// The task's own public files, as the system prompts name them: MLE-bench
// competitions keep their own names (labels.csv, sample_submission_null.csv,
// media folders), so a prompt that assumed train.csv would send the agent
// after files that are not there.
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { TaskView } from './types.js';

/** The names under a task's public/ (folders with a trailing slash), sorted; none when it cannot be read. */
export async function publicListing(taskDir: string): Promise<string[]> {
  const entries = await readdir(join(taskDir, 'public'), { withFileTypes: true }).catch(() => []);
  return entries.map((e) => (e.isDirectory() ? `${e.name}/` : e.name)).sort();
}

const SHOWN = 20;

/** `a.csv`, `b/`, … (at most 20, then how many more); the usual files when the task does not say. */
export function publicFilesText(task: Pick<TaskView, 'files'>): string {
  if (!task.files?.length) return 'description.md, train.csv, test.csv, sample_submission.csv and any media folders';
  const shown = task.files.slice(0, SHOWN).map((f) => `\`${f}\``);
  return task.files.length > SHOWN ? `${shown.join(', ')} and ${task.files.length - SHOWN} more` : shown.join(', ');
}

/** The sample submission's name within public/. */
export const sampleName = (task: Pick<TaskView, 'sample'>) => task.sample ?? 'sample_submission.csv';
