import { cp, mkdir, mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { UserError } from '../core/errors.js';
import { DEFAULT_LIMITS, type Limits, type Session, type SessionOptions, type Step, type StepResult } from './types.js';

/** The workspace as a jailed step sees it (bwrap, Docker and their warm executors); public/ sits inside it. */
export const JAIL_WORKSPACE = '/workspace';

/** The workspace as the agent's own code sees it: the jail's path, or the host's where the process backend runs without one. */
export const agentWorkspace = (s: Pick<Session, 'backend' | 'workspace'>) =>
  s.backend === 'process' ? s.workspace : JAIL_WORKSPACE;

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

export interface Where {
  workspace: string;
  pub: string;
}

/**
 * A session of a cold backend: a fresh workspace beside the task's public/,
 * every step run by `runStep` with the session's limits under the step's own.
 * `prepare` fills the workspace first; `close` runs before it is removed.
 */
export async function coldSession(
  backend: Session['backend'],
  opts: SessionOptions,
  runStep: (step: Step, limits: Limits, where: Where) => Promise<StepResult>,
  hooks: { prepare?: (where: Where) => Promise<void>; close?: () => Promise<unknown> } = {},
): Promise<Session> {
  const where = { pub: await publicDir(opts.task), workspace: await freshWorkspace() };
  await hooks.prepare?.(where);
  const base = { ...DEFAULT_LIMITS, ...opts.limits };
  return {
    backend,
    workspace: where.workspace,
    run: (step, over) => runStep(step, { ...base, ...over }, where),
    close: async () => {
      await hooks.close?.();
      await removeWorkspace(where.workspace);
    },
  };
}
