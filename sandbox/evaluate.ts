// Grading happens outside the agent's jail, after its step: the evaluator
// reads private/, so it must never run where agent code runs. It sees a
// validated copy of the submission, never the agent's file itself (which
// could be a symlink to the answers, or change while being read).
import { constants } from 'node:fs';
import { lstat, mkdtemp, open, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parse } from 'csv-parse/sync';
import { sha256 } from '../core/hash.js';
import { runTrusted } from './grader.js';

/** The evaluator's answer (docs/tasks.md). */
export interface EvaluatorResult {
  score: number;
  gold_threshold: number;
  silver_threshold: number;
  bronze_threshold: number;
  median_threshold: number;
  is_lower_better: boolean;
}

export type Grade = { ok: true; result: EvaluatorResult } | { ok: false; error: string };

export interface GradeOptions {
  /** Interpreter for the evaluator (host side). */
  python: string;
  maxBytes?: number;
  timeoutMs?: number;
  /** Aborting it kills the evaluator. */
  signal?: AbortSignal;
}

/** Checks the submission file and returns a private copy of it, or why it is refused. */
export async function copySubmission(workspace: string, name: string, maxBytes: number): Promise<{ path: string; dir: string; digest: string } | { error: string }> {
  const src = resolve(workspace, name);
  if (!src.startsWith(resolve(workspace) + '/')) return { error: `${name}: outside the workspace` };
  const st = await lstat(src).catch(() => null);
  if (!st) return { error: `no ${name} in the workspace` };
  if (st.isSymbolicLink()) return { error: `${name} is a symbolic link; write the file itself` };
  if (!st.isFile()) return { error: `${name} is not a regular file` };
  if (st.size > maxBytes) return { error: `${name} is ${st.size} bytes; the limit is ${maxBytes}` };
  const dir = await mkdtemp(join(tmpdir(), 'mlepipe-grade-'));
  const dest = join(dir, 'submission.csv');
  // O_NOFOLLOW: a link swapped in after the lstat is refused, not followed.
  const fh = await open(src, constants.O_RDONLY | constants.O_NOFOLLOW).catch(() => null);
  if (!fh) {
    await rm(dir, { recursive: true, force: true });
    return { error: `${name} could not be opened` };
  }
  const refuse = async (error: string) => {
    await rm(dir, { recursive: true, force: true });
    return { error };
  };
  try {
    const data = await fh.readFile();
    if (data.length > maxBytes) return await refuse(`${name} grew past ${maxBytes} bytes`);
    const rows = parse(data, { relax_column_count: false, skip_empty_lines: true }) as string[][];
    if (rows.length < 2) return await refuse(`${name} has no rows below its header`);
    // The bytes that were checked are the bytes graded.
    await writeFile(dest, data);
    return { path: dest, dir, digest: sha256(data) };
  } catch (err) {
    return await refuse(`${name} is not a valid CSV: ${(err as Error).message.split('\n')[0]}`);
  } finally {
    await fh.close();
  }
}

/**
 * Grades of submissions already graded in this process, by task, evaluator
 * and submission bytes: a rollout validates its submission, then grades the
 * same bytes at the end, and evaluators are deterministic.
 */
const graded = new Map<string, Grade>();
const GRADES_KEPT = 4096;

/** Runs the task's private evaluator on a validated copy of the agent's submission (or reuses its grade of the same bytes). */
export async function gradeSubmission(task: string, workspace: string, opts: GradeOptions, name = 'submission.csv'): Promise<Grade> {
  const copy = await copySubmission(workspace, name, opts.maxBytes ?? 100 * 1024 * 1024);
  if ('error' in copy) return { ok: false, error: copy.error };
  const evaluator = join(task, 'private', 'evaluator.py');
  const memo = `${resolve(task)}\0${opts.python}\0${(await stat(evaluator).catch(() => null))?.mtimeMs}\0${copy.digest}`;
  const known = graded.get(memo);
  if (known) {
    await rm(copy.dir, { recursive: true, force: true });
    return known;
  }
  const grade = await runGrade(task, copy.path, opts).finally(() => rm(copy.dir, { recursive: true, force: true }));
  // An interrupted grade is no grade of those bytes.
  if (!opts.signal?.aborted) {
    if (graded.size >= GRADES_KEPT) graded.delete(graded.keys().next().value!);
    graded.set(memo, grade);
  }
  return grade;
}

async function runGrade(task: string, submission: string, opts: GradeOptions): Promise<Grade> {
  const r = await runTrusted(opts.python, join(task, 'private', 'evaluator.py'), ['--submission_path', submission], { cwd: task, timeoutMs: opts.timeoutMs ?? 300_000, signal: opts.signal });
  const last = r.stdout.trim().split('\n').pop() ?? '';
  let out: Record<string, unknown>;
  try {
    out = JSON.parse(last) as Record<string, unknown>;
  } catch {
    return { ok: false, error: `evaluator printed no JSON (exit ${r.exitCode}): ${r.stderr.trim().split('\n').pop() ?? ''}` };
  }
  if (typeof out.error === 'string') return { ok: false, error: out.error };
  const keys = ['score', 'gold_threshold', 'silver_threshold', 'bronze_threshold', 'median_threshold'];
  if (!keys.every((k) => typeof out[k] === 'number') || typeof out.is_lower_better !== 'boolean') {
    return { ok: false, error: `evaluator output lacks ${keys.join(', ')} or is_lower_better` };
  }
  return { ok: true, result: out as unknown as EvaluatorResult };
}
