// The ML Developer, MLOps Engineer and Technical Writer as code: each turns a
// concrete spec into one artifact of the task folder (docs/tasks.md).
import { assetText } from '../core/assets.js';
import { sklearnStackWith } from '../sandbox/warm/modules.js';
import { submissionColumns, submissionKind, type TaskSpec } from './spec.js';

/** The generator's parts, in the order they are joined into one script. */
export const TASKGEN_PARTS = [
  'metrics.py',
  'taskgen_core.py',
  'taskgen_tabular_text.py',
  'taskgen_media.py',
  'taskgen_graph_series.py',
  'taskgen_teams.py',
  'design_matrix.py',
  'taskgen_output.py',
];

/**
 * What generate_task_env.py imports (numpy, pandas, SciPy through them, scikit-learn's reference teams,
 * Pillow for images): what a warm jail that builds tasks preloads, and nothing of the agents' stack.
 */
export const TASKGEN_MODULES = sklearnStackWith(
  'sklearn.naive_bayes',
  'sklearn.neighbors',
  'sklearn.tree',
  'sklearn.feature_extraction.text',
  'PIL.Image',
);

/** ML Developer: a self-contained, seeded generate_task_env.py (metrics + generator + this spec). */
export function generateTaskEnvScript(spec: TaskSpec): string {
  return [
    '#!/usr/bin/env python3',
    `# generate_task_env.py for ${spec.task_id}: recreates public/ and private/ under the folder given`,
    '# (default ./out). Self-contained; same spec, same bytes.',
    ...TASKGEN_PARTS.map((part) => assetText(`tasks/py/${part}`)),
    `SPEC = json.loads(r'''${JSON.stringify(spec)}''')`,
    '',
    'if __name__ == "__main__":',
    '    import sys',
    '    main(SPEC, sys.argv[1] if len(sys.argv) > 1 else "out")',
    '',
  ].join('\n');
}

/** MLOps Engineer: evaluator.py with the metric, direction and submission schema fixed. */
export function evaluatorScript(spec: TaskSpec): string {
  const config = {
    metric: spec.metric,
    is_lower_better: spec.is_lower_better,
    id_column: 'id',
    columns: submissionColumns(spec),
    kind: submissionKind(spec),
    classes: spec.target.classes ?? [],
  };
  const body = assetText('tasks/py/evaluator.py').replace('__CONFIG__', JSON.stringify(config));
  return `#!/usr/bin/env python3\n# evaluator.py for ${spec.task_id}\n${assetText('tasks/py/metrics.py')}\n${body}`;
}

const METRIC_TEXT: Record<string, string> = {
  accuracy: 'accuracy (share of correct labels; higher is better)',
  macro_f1: 'macro-averaged F1 over the classes (higher is better)',
  roc_auc: 'ROC-AUC of the predicted probabilities (one-vs-rest macro average for several classes; higher is better)',
  log_loss: 'multi-class logarithmic loss of the predicted probabilities (lower is better)',
  rmse: 'root mean squared error (lower is better)',
  mae: 'mean absolute error (lower is better)',
  r2: 'coefficient of determination R² (higher is better)',
  quadratic_weighted_kappa: 'quadratic weighted kappa between predicted and true ordinal levels (higher is better)',
};

const FILES: Record<string, string[]> = {
  'tabular-classification': [
    '`train.csv`: one row per record with its features and the target',
    '`test.csv`: the same features without the target',
  ],
  'tabular-regression': [
    '`train.csv`: one row per record with its features and the target',
    '`test.csv`: the same features without the target',
  ],
  'image-classification': [
    '`images/`: one PNG per record',
    '`train.csv`: `id`, `image` (path under this folder) and the target',
    '`test.csv`: `id` and `image`',
  ],
  'text-classification': ['`train.csv`: `id`, `text` and the target', '`test.csv`: `id` and `text`'],
  'audio-classification': [
    '`audio/`: one mono 16-bit WAV per record',
    '`train.csv`: `id`, `audio` (path under this folder) and the target',
    '`test.csv`: `id` and `audio`',
  ],
  'graph-node-classification': [
    '`graph/edges.csv`: undirected links between records (`source`, `target`)',
    '`train.csv`: node features `x0`…`x7` and the target',
    '`test.csv`: node features of the nodes to label',
  ],
  'time-series-forecasting': [
    '`train.csv`: the history, one row per step (`timestamp`, `step`, `driver`, target; some values may be missing)',
    '`test.csv`: the following steps to forecast (`timestamp`, `step`, `driver`)',
  ],
};

/** Technical Writer: description.md in the domain's voice, from the spec and the sample submission. */
export function descriptionMd(spec: TaskSpec, sampleHead: string): string {
  const d = spec.domain;
  const t = spec.target;
  const what =
    t.kind === 'regression'
      ? `predict **${t.name}**${t.unit ? ` (${t.unit})` : ''} for every ${d.entity} in \`test.csv\``
      : `predict **${t.name}** for every ${d.entity} in \`test.csv\`; the possible values are ${(t.classes ?? []).map((c) => `\`${c}\``).join(', ')}`;
  const kind = submissionKind(spec);
  const format =
    kind === 'prob'
      ? (t.classes ?? []).length > 2
        ? 'one probability column per class (each row summing to 1)'
        : `the probability that ${t.name} is \`${(t.classes ?? [])[1]}\``
      : kind === 'value'
        ? 'a number'
        : 'one of the labels above';
  return [
    `# ${d.scenario}`,
    '',
    '## Overview',
    '',
    `A ${d.sector} team runs ${d.scenario.toLowerCase()}. Your task is to ${what}.`,
    `There are ${spec.n_train} labelled records for training and ${spec.n_test} to predict.`,
    '',
    '## Files',
    '',
    ...FILES[spec.generator].map((f) => `- ${f}`),
    '- `sample_submission.csv`: the submission format, with dummy predictions',
    '',
    '## Evaluation',
    '',
    `Submissions are scored with ${METRIC_TEXT[spec.metric]}.`,
    '',
    '## Submission format',
    '',
    `Write \`submission.csv\` with the columns ${submissionColumns(spec)
      .map((c) => `\`${c}\``)
      .join(', ')}: one row per \`id\` of \`test.csv\`, with ${format}. For example:`,
    '',
    '```',
    sampleHead.trim(),
    '```',
    '',
  ].join('\n');
}

/** Names and words that must never reach public files or the description. */
export const HIDDEN_NAMES = [
  'answer.csv',
  'threshold.json',
  'evaluator.py',
  'spec.json',
  'generate_task_env.py',
  'private/',
  'hidden_rule',
  'noise_ceiling',
];

/** The leakage check: hidden names in the description, the label column in public test data, rule text. */
export function leakageProblems(
  targetName: string,
  description: string,
  testColumns: readonly string[],
  publicFiles: string[],
  ruleText: string,
): string[] {
  const problems: string[] = [];
  for (const name of HIDDEN_NAMES) if (description.includes(name)) problems.push(`description mentions ${name}`);
  if (testColumns.includes(targetName)) problems.push(`public test.csv has the label column ${targetName}`);
  for (const f of publicFiles)
    if (HIDDEN_NAMES.some((h) => f.endsWith(h.replace(/\/$/, '')))) problems.push(`public file ${f} has a hidden name`);
  // Fragments of the rule (its coefficients as written in spec.json) must not appear in the description.
  for (const m of ruleText.match(/-?\d+\.\d{4,}/g) ?? [])
    if (description.includes(m)) problems.push(`description contains hidden-rule value ${m}`);
  // A rule written in words (by a model) must not be copied into the statement either.
  if (ruleText.length > 20 && !ruleText.startsWith('{') && description.includes(ruleText.trim()))
    problems.push('description repeats the hidden rule');
  return problems;
}
