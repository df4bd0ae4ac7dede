// The scripted mlab agents on a task that ships a starter script (public/train.py,
// the MLToolBench-style suite): `diagnose` reads the script, calls the
// diagnostic tools that fit the task's files, asks Edit Script (AI) to fix what
// their answers reveal, runs the result and submits; `blind` copies the starter,
// applies one fixed change without looking, runs it and submits; `guided`
// calls exactly the tools its guidance lists to inspect (none without
// guidance), then fixes what their answers reveal. Steps are worked out again
// at every turn from the observations so far.
import { formatIssues, suspiciousSettings, type Issue } from './starterfix.js';
import type { PolicyRequest, TurnView } from './types.js';

type Step = [thought: string, action: string, input: Record<string, unknown>];

/** Whether the first observation (List Files public) shows a starter script. */
export function hasStarter(history: readonly TurnView[]): boolean {
  return /(^|\s|\/)train\.py\b/m.test(history[0]?.observation ?? '');
}

/** The tool calls that fit the task's files, among those offered. */
export function toolCalls(listing: string, code: string, offered: readonly string[]): Step[] {
  const calls: Step[] = [];
  const add = (tool: string, input: Record<string, unknown>, why: string) => {
    if (offered.includes(tool)) calls.push([why, tool, input]);
  };
  if (/\bimages\b/.test(listing)) {
    add(
      'image_normalization_stats',
      { path: 'public/images' },
      'Check the pixel range and channel statistics the script should normalize with.',
    );
    // The vision module's own count of the classes when it is offered (the task's domain), else the table tool's.
    if (offered.includes('class_balance_check'))
      add(
        'class_balance_check',
        { path: 'public/train.csv', label_column: 'label' },
        'Check whether the classes are balanced.',
      );
    else
      add(
        'detect_label_imbalance',
        { path: 'public/train.csv', target: 'label' },
        'Check whether the classes are balanced.',
      );
  } else if (/\bnodes\.csv\b/.test(listing)) {
    add(
      'node_feature_health',
      { features: 'public/nodes.csv' },
      'Check the node features: scales, constant columns, non-finite values.',
    );
  } else if (/\btrain\.csv\b/.test(listing)) {
    add(
      'detect_missing_values',
      { path: 'public/train.csv' },
      'Check which columns have missing values and how the script fills them.',
    );
    add(
      'check_feature_normalization',
      { path: 'public/train.csv' },
      'Check whether the columns are on comparable scales.',
    );
    if (/LOOKBACK|window/.test(code))
      add('stationarity_test_adf', { path: 'public/train.csv' }, 'Check whether the series keeps a stable level.');
    const label = /\bytr = train\['(\w+)'\]/.exec(code)?.[1];
    if (label)
      add(
        'detect_label_imbalance',
        { path: 'public/train.csv', target: label },
        'Check whether the classes are balanced.',
      );
  }
  return calls;
}

type Evidence = Record<string, unknown>;
const nums = (v: unknown): number[] | null =>
  Array.isArray(v) && v.length && v.every((x) => typeof x === 'number') ? (v as number[]) : null;
const num = (v: unknown): number | null => (typeof v === 'number' ? v : null);

/**
 * What the tools' answers and the script reveal, as issues for the edit. Only the structured part of
 * each answer is read (its numbers and flags), never the prose, so the same facts in other words
 * lead to the same edit, and withheld values (an observation mask) lead to none.
 */
export function issuesFrom(code: string, answers: ReadonlyMap<string, Evidence>): Issue[] {
  const issues: Issue[] = [];
  const ev = (tool: string): Evidence => answers.get(tool) ?? {};
  const img = ev('image_normalization_stats');
  const pixelMax = nums(img.max);
  if (pixelMax && Math.max(...pixelMax) > 1.5 && !/\/ 255/.test(code))
    issues.push({ kind: 'pixel-range', detail: 'images are 0-255 and the script does not rescale them' });
  // The tool's advised constants are on the 0-1 scale; the script's on 0-255 do not fit the data.
  const advised = nums(img.mean_01) ?? nums(img.mean);
  if (advised && advised.every((m) => m < 1) && /^MEAN, STD = np\.array\(\[\d{2,}/m.test(code))
    issues.push({ kind: 'normalization-constants', detail: 'the constants are on the 0-255 scale, the data on 0-1' });
  const nodeRatio = num(ev('node_feature_health').std_ratio);
  const norm = ev('check_feature_normalization');
  const tabRatio = num(norm.std_ratio);
  const cols = Array.isArray(norm.columns) ? (norm.columns as Array<Record<string, unknown>>) : null;
  const standardized =
    !!cols?.length && cols.every((c) => Math.abs(num(c.mean) ?? 0) < 0.1 && Math.abs((num(c.std) ?? 0) - 1) < 0.1);
  if ((nodeRatio !== null && nodeRatio > 100) || (tabRatio !== null && (tabRatio > 100 || standardized)))
    issues.push({ kind: 'standardize', detail: 'feature scales differ by orders of magnitude' });
  if (ev('stationarity_test_adf').stationary === false)
    issues.push({ kind: 'level-drift', detail: 'the series level drifts' });
  const gaps = ev('detect_missing_values').columns;
  const missing = Array.isArray(gaps)
    ? gaps.map((c) => (c as Evidence).column).filter((c): c is string => typeof c === 'string' && /^\w+$/.test(c))
    : [];
  if (missing.length) issues.push({ kind: 'missing-values', detail: missing.join(', ') });
  const ratio = num(ev('detect_label_imbalance').imbalance_ratio) ?? num(ev('class_balance_check').imbalance_ratio);
  if (ratio !== null && ratio < 2 && /keep = .*np\.where\(/.test(code))
    issues.push({ kind: 'class-sampling', detail: 'labels are balanced but the script subsamples by class' });
  const settings = suspiciousSettings(code);
  if (settings.length) issues.push({ kind: 'settings', detail: settings.join(', ') });
  if (
    (/np\.log1p\(/.test(code) && !/np\.expm1\(/.test(code)) ||
    (/\(y - mu\) \/ sd/.test(code) && !/\* sd \+ mu/.test(code))
  )
    issues.push({ kind: 'target-transform', detail: 'predictions are never transformed back' });
  if (/enumerate\(sorted\(\w+\)\)/.test(code))
    issues.push({ kind: 'output-order', detail: 'columns written in sorted order' });
  return issues;
}

export type SuiteMode = 'diagnose' | 'blind' | 'guided';

/** The guidance's inspection list, in its order, as far as the rollout offers those tools. */
function guidedCalls(req: PolicyRequest, offered: readonly string[]): Step[] {
  // The thought is its own words, not the guidance's: what it writes is what a student learns from.
  return (req.guidance?.inspect ?? [])
    .filter((c) => offered.includes(c.tool))
    .map((c) => [`Check the evidence ${c.tool} gives before editing.`, c.tool, c.args]);
}

export function suiteSteps(req: PolicyRequest, mode: SuiteMode): Step[] {
  const listing = req.history[0]?.observation ?? '';
  const offered = req.actions ?? [];
  const steps: Step[] = [['List the task files first.', 'List Files', { dir_path: 'public' }]];
  if (mode === 'blind') {
    steps.push([
      'Copy the starter and train it longer.',
      'Edit Script (AI)',
      {
        script_name: 'public/train.py',
        edit_instruction: formatIssues([{ kind: 'train-longer', detail: 'triple max_iter' }]),
        save_name: 'train.py',
      },
    ]);
  } else {
    steps.push(['Read the starter script.', 'Read File', { file_name: 'public/train.py' }]);
    const code = req.history[1]?.observation ?? '';
    const calls = mode === 'guided' ? guidedCalls(req, offered) : toolCalls(listing, code, offered);
    steps.push(...calls);
    const answers = new Map(
      req.history.slice(2, 2 + calls.length).map((h, i) => [calls[i][1], h.evidence ?? {}] as const),
    );
    const issues = issuesFrom(code, answers);
    const instruction = issues.length ? formatIssues(issues) : 'ISSUE none: nothing to change';
    steps.push([
      `Fix what the checks found: ${issues.map((i) => i.kind).join(', ') || 'nothing'}.`,
      'Edit Script (AI)',
      { script_name: 'public/train.py', edit_instruction: instruction, save_name: 'train.py' },
    ]);
  }
  steps.push(['Run the edited script; it writes submission.csv.', 'Execute Script', { script_name: 'train.py' }]);
  steps.push([
    'The submission is written.',
    'Final Answer',
    {
      final_answer: mode === 'blind' ? 'trained the starter longer' : 'fixed the starter where the diagnostics pointed',
      submission: 'submission.csv',
    },
  ]);
  return steps;
}
