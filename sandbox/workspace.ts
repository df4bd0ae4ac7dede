import { cp, mkdir, mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { UserError } from '../core/errors.js';

/** The task's public/ folder, checked. */
export async function publicDir(task: string): Promise<string> {
  const dir = resolve(task, 'public');
  const st = await stat(dir).catch(() => null);
  if (!st?.isDirectory()) throw new UserError(`${task}: not a task folder (no public/ inside)`);
  return dir;
}

/** A fresh, empty workspace on the host. */
export async function freshWorkspace(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'mlepipe-ws-'));
  await mkdir(join(dir, 'public'));
  return dir;
}

export async function removeWorkspace(dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true, maxRetries: 3 });
}

/** Copies a file into the workspace (for `mlepipe sandbox run FILE.py`). */
export async function copyIn(file: string, workspace: string, name: string): Promise<void> {
  await cp(file, join(workspace, name));
}
