// Importer for released SandMLE task folders, which keep evaluator.py and
// answer.csv inside prepared/public/: they move to private/, the rest stays
// public, and task.json records where the task came from.
import { cp, mkdir, readdir, rm, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { UserError } from '../core/errors.js';
import { writeTaskJson } from './taskjson.js';

/** Files that an agent must never see, wherever the release put them. */
const PRIVATE_NAMES = new Set(['evaluator.py', 'answer.csv', 'threshold.json', 'generate_task_env.py', 'spec.json', 'answers.csv']);

async function isDir(p: string): Promise<boolean> {
  return (await stat(p).catch(() => null))?.isDirectory() ?? false;
}

/** Task folders under SRC: SRC itself when it holds prepared/public, else its children that do. */
export async function findReleaseTasks(src: string): Promise<string[]> {
  if (await isDir(join(src, 'prepared', 'public'))) return [src];
  const out: string[] = [];
  for (const name of (await readdir(src).catch(() => [] as string[])).sort()) {
    if (await isDir(join(src, name, 'prepared', 'public'))) out.push(join(src, name));
  }
  if (!out.length) throw new UserError(`${src}: no SandMLE task found (expected <id>/prepared/public/)`);
  return out;
}

export interface ImportResult {
  id: string;
  moved: string[];
  problems: string[];
}

export async function importSandmleTask(taskDir: string, destRoot: string): Promise<ImportResult> {
  const id = basename(taskDir);
  const pub = join(taskDir, 'prepared', 'public');
  const dest = join(destRoot, id);
  await rm(dest, { recursive: true, force: true });
  await mkdir(join(dest, 'public'), { recursive: true });
  await mkdir(join(dest, 'private'), { recursive: true });
  const moved: string[] = [];
  for (const name of await readdir(pub)) {
    const privateFile = PRIVATE_NAMES.has(name);
    await cp(join(pub, name), join(dest, privateFile ? 'private' : 'public', name), { recursive: true });
    if (privateFile) moved.push(name);
  }
  // Anything already private in the release stays private.
  if (await isDir(join(taskDir, 'prepared', 'private'))) {
    for (const name of await readdir(join(taskDir, 'prepared', 'private'))) await cp(join(taskDir, 'prepared', 'private', name), join(dest, 'private', name), { recursive: true });
  }
  const problems: string[] = [];
  for (const need of ['evaluator.py', 'answer.csv']) if (!(await stat(join(dest, 'private', need)).catch(() => null))) problems.push(`no ${need}`);
  await writeTaskJson(dest, { id, generator: 'sandmle-release', source: { release: taskDir } });
  return { id, moved, problems };
}
