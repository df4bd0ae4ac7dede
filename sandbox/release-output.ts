// Evaluator output read the way the released SandMLE code reads it
// (deepresearch_tools.py, SynScoreTool.call), for tasks imported from the
// release (task.json `evaluator_output: release`): the whole stdout, stripped,
// is one JSON document as Python's json.loads reads it (bare NaN, Infinity and
// -Infinity included); numbers are cast with Python's float() (strings and
// booleans too), an uncastable threshold is null, and is_lower_better is read
// leniently, a missing or unreadable one meaning higher is better.
import { parseJsonText } from '../core/json-files.js';
import type { Grade } from './evaluate.js';

/** float(x) on what json.loads gives, or null where Python's float() raises (or x is null). */
export function pyFloatOf(v: unknown): number | null {
  if (typeof v === 'number') return v;
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (typeof v !== 'string') return null;
  const s = v.trim();
  if (/^[+-]?(inf|infinity)$/i.test(s)) return s.startsWith('-') ? -Infinity : Infinity;
  if (/^[+-]?nan$/i.test(s)) return NaN;
  // Python's float literal, underscores between digits allowed.
  if (!/^[+-]?(\d(_?\d)*(\.(\d(_?\d)*)?)?|\.\d(_?\d)*)([eE][+-]?\d(_?\d)*)?$/.test(s)) return null;
  return Number(s.replace(/_/g, ''));
}

/** The release's parse_bool: booleans, numbers (non-zero is true), "true"/"1"/"yes" (any case) against every other string; null otherwise. */
export function pyBoolOf(v: unknown): boolean | null {
  if (typeof v === 'boolean') return v;
  if (typeof v === 'number') return v !== 0;
  if (typeof v === 'string') return ['true', '1', 'yes'].includes(v.trim().toLowerCase());
  return null;
}

export function parseReleaseOutput(stdout: string, stderr: string, exitCode: number): Grade {
  const said = [stderr.trim(), stdout.trim()].filter(Boolean).join('\n');
  if (exitCode !== 0)
    return {
      ok: false,
      error: `evaluator exited with status ${exitCode}${said ? `: ${said.split('\n').pop()}` : ''}`,
      said,
    };
  let data: unknown;
  try {
    data = parseJsonText(stdout.trim());
  } catch (err) {
    return { ok: false, error: `the evaluator's output is not one JSON document: ${(err as Error).message}` };
  }
  if (!data || typeof data !== 'object' || Array.isArray(data))
    return { ok: false, error: 'the evaluator printed JSON that is not an object' };
  const out = data as Record<string, unknown>;
  const score = pyFloatOf(out.score);
  if (score === null)
    return { ok: false, error: typeof out.error === 'string' ? out.error : 'the evaluator printed no score', said };
  return {
    ok: true,
    result: {
      score,
      gold_threshold: pyFloatOf(out.gold_threshold),
      silver_threshold: pyFloatOf(out.silver_threshold),
      bronze_threshold: pyFloatOf(out.bronze_threshold),
      median_threshold: pyFloatOf(out.median_threshold),
      is_lower_better: pyBoolOf(out.is_lower_better) ?? false,
    },
  };
}
