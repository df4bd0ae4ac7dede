// task.json (docs/tasks.md): what the task is, plus the digest of every file, so
// a copy can be checked against what was generated or imported.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { listFiles } from '../core/fs.js';

export async function writeTaskJson(dest: string, fields: Record<string, unknown>): Promise<void> {
  const files = await listFiles(dest, (rel) => rel === 'task.json');
  const task = { ...fields, files: Object.fromEntries(files.map((f) => [f.path, f.sha256])) };
  await writeFile(join(dest, 'task.json'), JSON.stringify(task, null, 2) + '\n');
}
