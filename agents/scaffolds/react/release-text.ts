// What the released SandMLE code's tools say back to the model, word for
// word where the model can learn from the words: the Score tool's answers
// (deepresearch_tools.py, SynScoreTool.call), the execution timeout
// (deepresearch_agent.py, MultiTurnReactAgent.execute_python) and the
// answers to calls it cannot make (MultiTurnReactAgent._run and
// custom_call_tool). Its reward reads the Score answer's JSON back
// (deepresearch_workflow.py, _extract_score_metrics), so the keys are its keys.
import type { EvaluatorResult } from '../../../sandbox/evaluate.js';

export const TOOL_JSON_ERROR =
  'Error: Tool call is not a valid JSON. Tool call must contain a valid "name" and "arguments" field.';

const TOOLS = "['PythonInterpreter', 'Score']";

export const toolNotFound = (name: unknown) =>
  `Tool ${typeof name === 'string' ? name : JSON.stringify(name)} not found. Available tools: ${TOOLS}`;

/** Why a Score call's arguments cannot be used, or undefined. A wrong competition is refused here; the release would grade that other task. */
export function scoreArgumentError(args: Record<string, unknown> | undefined, taskId: string): string | undefined {
  if (!args) return 'Error calling tool Score: its arguments must be a JSON object';
  if (!('competition_id' in args))
    return "Error calling tool Score: SynScoreTool.call() missing 1 required positional argument: 'competition_id'";
  if (args.competition_id !== taskId)
    return `Error calling tool Score: no competition ${JSON.stringify(args.competition_id)} here; this competition is ${taskId}`;
  return undefined;
}

export const releaseTimeout = (seconds: number) =>
  `[Timeout] Python execution timed out after ${seconds}s. Please optimize your code for efficiency and restrict the execution time within ${seconds}s.`;

/** A number as Python's repr (and so json.dumps) writes a float: 1.0, 1e-05, 1e+16. */
export function pyFloat(x: number): string {
  if (Number.isNaN(x)) return 'NaN';
  if (!Number.isFinite(x)) return x > 0 ? 'Infinity' : '-Infinity';
  if (x === 0) return Object.is(x, -0) ? '-0.0' : '0.0';
  const abs = Math.abs(x);
  if (abs >= 1e16 || abs < 1e-4) {
    const [m, e] = x.toExponential().split('e');
    const exp = Number(e);
    return `${m}e${exp < 0 ? '-' : '+'}${String(Math.abs(exp)).padStart(2, '0')}`;
  }
  const s = String(x);
  return /[.e]/.test(s) ? s : `${s}.0`;
}

const pyValue = (v: number | boolean | string | null) =>
  v === null ? 'null' : typeof v === 'boolean' ? String(v) : typeof v === 'number' ? pyFloat(v) : JSON.stringify(v);

/** The metrics object of a Score answer, in the release's key order, as json.dumps writes it. */
export function scoreDetails(r: EvaluatorResult, submission: string): string {
  const fields: Array<[string, number | boolean | string | null]> = [
    ['score_primary (main competition metric for current code)', r.score],
    ['metric_lower_is_better (true means lower score is better)', r.is_lower_better],
    ['threshold_gold (score needed for gold tier)', r.gold_threshold],
    ['threshold_silver (score needed for silver tier)', r.silver_threshold],
    ['threshold_bronze (score needed for bronze tier)', r.bronze_threshold],
    ['threshold_median (median submission score)', r.median_threshold],
    ['submission_path', submission],
  ];
  return `{${fields.map(([k, v]) => `${JSON.stringify(k)}: ${pyValue(v)}`).join(', ')}}`;
}

/** The Score tool's answer to a graded submission: below bronze it says so (a null bronze says nothing). */
export function scoreAnswer(r: EvaluatorResult, submission: string): string {
  const bronze = r.bronze_threshold;
  const below = bronze !== null && (r.is_lower_better ? r.score > bronze : r.score < bronze);
  const details = scoreDetails(r, submission);
  return below
    ? `Submission OK. But you do not reach the bronze threshold to get the medal. Please revise your Python code to improve your score. Details: ${details}`
    : `Submission OK. Details: ${details}`;
}

/** The Score tool's answer to a submission it cannot grade. */
export function scoreRefusal(problem: string, submission: string, said?: string): string {
  if (/^no \S+ in the workspace$/.test(problem))
    return `[Error] submission file not found at ${submission}. Please revise your Python code to generate submission.csv.`;
  // A release task's evaluator's own words, as the release shows them; mlepipe's account of the failure otherwise.
  return `Submission csv is invalid. Please revise your Python code to re-generate another submission.csv file. Detailed issue: ${said ?? problem}`;
}

/** The line the released execution tool ends a cut output tail with (`_truncate_block`). */
export const truncatedLines = (n: number) => `...[truncated ${n} lines, see log for full output]`;

/**
 * The released execution tool's answer (`submit_script_to_srun_api`): the output tails, and where
 * submission.csv is (`found`, or null when there is none). `fallback` is what it shows when both tails
 * are empty and there is no submission: the last lines of the stdout log, under [Output].
 */
export function executionText(stdout: string, stderr: string, found: string | null, fallback: string): string {
  const note = found ? `submission.csv found at ${found}.` : 'submission.csv not found.';
  if (stdout && stderr) return `[Output]\n${stdout}\n\n[Stderr]\n${stderr}\n\nNote: ${note}`;
  if (stdout) return `[Output]\n${stdout}\n\nNote: no stderr, and ${note}`;
  if (stderr)
    return found
      ? `No stdout, but submission.csv found at ${found}. Stderr:\n${stderr}`
      : `No stdout and submission.csv not found. Stderr:\n${stderr}`;
  return found ? `No stdout, but submission.csv found at ${found}.` : `[Output]\n${fallback}`;
}

/** The released user prompt's listing of the dataset folder (`load_task_description`): heading, then one line a name. */
export const filesHeading = (dir: string) => `## Files Provided in **${dir}**:`;
export const fileLine = (path: string) => `- **${path}**`;
