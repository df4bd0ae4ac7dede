// The task's own public files, as the system prompts name them: MLE-bench
// competitions keep their own names (labels.csv, sample_submission_null.csv,
// media folders), so a prompt that assumed train.csv would send the agent
// after files that are not there.
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { readJsonFile } from '../../core/text.js';
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

/** What a scaffold is told of a task folder: its description, task.json's public facts and its public files. */
export async function readTaskView(taskDir: string, id: string): Promise<TaskView> {
  const meta = (await readJsonFile(join(taskDir, 'task.json'))) as {
    is_lower_better?: boolean;
    modality?: string;
    domain?: string;
    task_type?: string;
    metric?: string;
    n_train?: number;
    sample_submission?: string;
  };
  const description = await readFile(join(taskDir, 'public', 'description.md'), 'utf8').catch(
    () => '(no description.md)',
  );
  return {
    id,
    description,
    lowerIsBetter: meta.is_lower_better ?? false,
    meta: {
      id,
      modality: meta.modality,
      ...(meta.domain ? { domain: meta.domain } : {}),
      task_type: meta.task_type,
      metric: meta.metric,
      n_train: meta.n_train,
      is_lower_better: meta.is_lower_better,
    },
    files: await publicListing(taskDir),
    sample: meta.sample_submission ?? 'sample_submission.csv',
  };
}
