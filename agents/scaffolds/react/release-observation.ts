// An execution's observation as the released code writes it (deepresearch_tools.py,
// submit_script_to_srun_api): its job service hands back the last 200 lines of
// each log, the tool strips them and keeps the last 20 (with a line saying how
// many it cut), then says whether submission.csv is in the run's folder. Exit
// codes are not shown; a failure shows as its traceback under [Stderr].
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { StepResult } from '../../../sandbox/index.js';
import { pyStrip } from './release.js';
import { executionText, truncatedLines } from './release-text.js';

// bytes.splitlines breaks at \n, \r\n and \r; str.splitlines at these and a few more.
const BYTES_BREAK = /\r\n|[\n\r]/;
const STR_BREAK = /\r\n|[\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]/;

/** Python's splitlines: no empty line after a final break. */
function splitLines(s: string, brk: RegExp): string[] {
  if (!s) return [];
  const parts = s.split(brk);
  if (parts[parts.length - 1] === '') parts.pop();
  return parts;
}

/** The job service's tail of a log (its last 200 lines), as the tool strips and cuts it to 20. */
export function releaseTail(log: string, max = 20): string {
  const text = pyStrip(splitLines(log, BYTES_BREAK).slice(-200).join('\n'));
  const lines = splitLines(text, STR_BREAK);
  if (lines.length <= max) return text;
  return [...lines.slice(-max), truncatedLines(lines.length - max)].join('\n');
}

/**
 * The observation of a finished step. `workspace` is the host's folder (where submission.csv is looked
 * for), `shown` the same folder as the agent's code sees it (what the note names).
 */
export function releaseExecution(r: Pick<StepResult, 'stdout' | 'stderr'>, workspace: string, shown: string): string {
  const found = existsSync(join(workspace, 'submission.csv')) ? `${shown}/submission.csv` : null;
  // Both tails empty and no submission: the tool reads the stdout log's last 20 lines itself.
  const fallback = splitLines(r.stdout, STR_BREAK).slice(-20).join('\n');
  return executionText(releaseTail(r.stdout), releaseTail(r.stderr), found, fallback);
}
