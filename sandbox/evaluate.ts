// Grading happens outside the agent's jail, after its step: the evaluator
// reads private/, so it must never run where agent code runs. It sees a
// validated copy of the submission, never the agent's file itself (which
// could be a symlink to the answers, or change while being read).
import { constants } from 'node:fs';
import { lstat, mkdtemp, open, readdir, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parse } from 'csv-parse/sync';
import { exists } from '../core/fs.js';
import { sha256 } from '../core/hash.js';
import { isObject, readJson } from '../core/json-files.js';
import { runTrusted } from './grader.js';
import { parseReleaseOutput } from './release-output.js';

/** The evaluator's answer (docs/tasks.md). A null threshold is a milestone the task does not have: never reached. */
export interface EvaluatorResult {
  score: number;
  gold_threshold: number | null;
  silver_threshold: number | null;
  bronze_threshold: number | null;
  median_threshold: number | null;
  is_lower_better: boolean;
}

/**
 * A grade. Not ok: `error` is what the agent may be shown; `fault` is set when
 * the evaluator says the grader itself failed (it printed "fault": "grader"),
 * with its detail, so that the run is a grading error rather than an invalid
 * submission.
 */
export type Grade =
  | { ok: true; result: EvaluatorResult }
  // `said`: a release task's evaluator's own words (stderr, then stdout), which the released Score tool shows.
  | { ok: false; error: string; fault?: string; said?: string };

export interface GradeOptions {
  /** Interpreter for the evaluator (host side). */
  python: string;
  maxBytes?: number;
  timeoutMs?: number;
  /** Aborting it kills the evaluator. */
  signal?: AbortSignal;
}

/** Checks the submission file and returns a private copy of it, or why it is refused. */
export async function copySubmission(
  workspace: string,
  name: string,
  maxBytes: number,
): Promise<{ path: string; dir: string; digest: string } | { error: string }> {
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
export async function gradeSubmission(
  task: string,
  workspace: string,
  opts: GradeOptions,
  name = 'submission.csv',
): Promise<Grade> {
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

async function runGrade(taskDir: string, submission: string, opts: GradeOptions): Promise<Grade> {
  const task = resolve(taskDir);
  const mode = await outputMode(task);
  const view = await evaluatorView(task);
  try {
    const r = await runTrusted(opts.python, join(task, 'private', 'evaluator.py'), ['--submission_path', submission], {
      cwd: view.dir,
      timeoutMs: opts.timeoutMs ?? 300_000,
      signal: opts.signal,
    });
    return parseEvaluatorOutput(r.stdout, r.stderr, r.exitCode, mode);
  } finally {
    await view.close();
  }
}

/** How a task's evaluator output is read: mlepipe's way, or the release's (task.json `evaluator_output`). */
export type OutputMode = 'mlepipe' | 'release';

export async function outputMode(task: string): Promise<OutputMode> {
  const file = join(task, 'task.json');
  const meta = (await exists(file)) ? await readJson<{ evaluator_output?: string }>(file, isObject) : {};
  return meta.evaluator_output === 'release' ? 'release' : 'mlepipe';
}

/**
 * Where evaluators run: a fresh folder of links to the task's public and
 * private files (a private file wins a name both hold). Released SandMLE
 * evaluators ran in prepared/public/ among the data and the answers, and open
 * test.csv, answer.csv or threshold.json by relative path. The agent never
 * sees this folder: it is made outside the jail for one grade.
 */
export async function evaluatorView(task: string): Promise<{ dir: string; close: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'mlepipe-evaluator-'));
  const linked = new Set<string>();
  for (const side of ['private', 'public']) {
    for (const name of await readdir(join(task, side)).catch(() => [] as string[])) {
      if (linked.has(name)) continue;
      linked.add(name);
      await symlink(join(task, side, name), join(dir, name));
    }
  }
  return { dir, close: () => rm(dir, { recursive: true, force: true }) };
}

const THRESHOLDS = ['gold_threshold', 'silver_threshold', 'bronze_threshold', 'median_threshold'] as const;

/**
 * The last JSON object printed: one that starts on a line beginning with "{"
 * and ends on a line ending with "}", so indented output and log lines
 * before or after it are fine.
 */
function lastJsonObject(stdout: string): Record<string, unknown> | undefined {
  const lines = stdout.split('\n');
  const starts = lines.flatMap((l, i) => (l.startsWith('{') ? [i] : []));
  const ends = lines.flatMap((l, i) => (l.trimEnd().endsWith('}') ? [i] : []));
  // Bounded: a chatty evaluator must not make this quadratic.
  let tries = 400;
  for (let a = starts.length - 1; a >= 0; a--) {
    for (let b = ends.length - 1; b >= 0 && ends[b] >= starts[a]; b--) {
      if (--tries < 0) return undefined;
      try {
        const v = JSON.parse(lines.slice(starts[a], ends[b] + 1).join('\n')) as unknown;
        if (v && typeof v === 'object' && !Array.isArray(v)) return v as Record<string, unknown>;
      } catch {
        // Not this span; try a shorter or an earlier one.
      }
    }
  }
  return undefined;
}

/** true/false, "true"/"False", "yes"/"no", 1/0 and "1"/"0", as the release's evaluators print them and its Score tool reads them. */
function flag(v: unknown): boolean | undefined {
  if (typeof v === 'boolean') return v;
  if (v === 1 || v === 0) return v === 1;
  if (typeof v === 'string' && /^(true|false|yes|no|1|0)$/i.test(v.trim())) return /^(true|yes|1)$/i.test(v.trim());
  return undefined;
}

/** Scores JSON cannot hold, as an evaluator writes them (mlebench_grade.py: MLE-bench counts them as valid). */
const NON_FINITE: Record<string, number> = { inf: Infinity, '-inf': -Infinity, nan: NaN };

/** An evaluator's stdout and exit status as a grade; a non-zero exit is never a valid grade. */
export function parseEvaluatorOutput(
  stdout: string,
  stderr: string,
  exitCode: number,
  mode: OutputMode = 'mlepipe',
): Grade {
  if (mode === 'release') return parseReleaseOutput(stdout, stderr, exitCode);
  const out = lastJsonObject(stdout);
  const why = stderr.trim().split('\n').pop() ?? '';
  if (exitCode !== 0) {
    const said = typeof out?.error === 'string' ? out.error : why;
    return { ok: false, error: `evaluator exited with status ${exitCode}${said ? `: ${said}` : ''}` };
  }
  if (!out) return { ok: false, error: `evaluator printed no JSON object${why ? `: ${why}` : ''}` };
  if (typeof out.error === 'string') {
    if (out.fault !== 'grader') return { ok: false, error: out.error };
    return { ok: false, error: out.error, fault: typeof out.detail === 'string' ? out.detail : out.error };
  }
  const lower = flag(out.is_lower_better);
  const bad = THRESHOLDS.filter((k) => !(out[k] === null || (typeof out[k] === 'number' && Number.isFinite(out[k]))));
  const score = typeof out.score === 'string' ? NON_FINITE[out.score] : out.score;
  if (typeof score !== 'number' || lower === undefined || bad.length) {
    return {
      ok: false,
      error: `evaluator output lacks a numeric score, ${THRESHOLDS.join(', ')} (numbers or null) or is_lower_better`,
    };
  }
  const th = Object.fromEntries(THRESHOLDS.map((k) => [k, out[k] as number | null])) as Pick<
    EvaluatorResult,
    (typeof THRESHOLDS)[number]
  >;
  return { ok: true, result: { score, ...th, is_lower_better: lower } };
}
