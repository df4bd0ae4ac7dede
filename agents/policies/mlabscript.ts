// Scripted replies in MLAgentBench's format (the mlab scaffold): list the task
// files, call a diagnostic tool or two on train.csv when they are offered, write
// a kit-based solution with Write File, run it with Execute Script for each
// rung of the ladder, then Final Answer. Edit and Understand requests (the
// scaffold's model-backed actions) get plain answers that change nothing.
import { solveCode } from './kitcode.js';
import { hasStarter, suiteSteps, type SuiteMode } from './mlabsuite.js';
import { applyIssues, parseIssues } from './starterfix.js';
import type { PolicyRequest } from './types.js';

/** The diagnostics the `diagnose` agent calls, when exposed: both need only the table. */
const DIAGNOSTICS = ['identify_feature_types', 'detect_missing_values'];

function reply(thought: string, action: string, input: Record<string, unknown>, plan: string): string {
  return [
    `Reflection: ${thought}`,
    `Research Plan and Status: ${plan}`,
    'Fact Check: only what the observations so far show.',
    `Thought: ${thought}`,
    `Action: ${action}`,
    `Action Input: ${JSON.stringify(input, null, 1)}`,
  ].join('\n');
}

export function mlabReply(ladder: readonly string[], req: PolicyRequest, mode: SuiteMode): string {
  const diagnose = mode !== 'blind';
  // Edits: the issues named in the instruction, applied to the script (none named: unchanged).
  if (req.purpose === 'edit')
    return '```python\n' + applyIssues(req.file?.content ?? '', parseIssues(req.file?.instruction ?? '')) + '\n```';
  if (req.purpose === 'understand')
    return `${req.file?.name ?? 'the file'} has ${(req.file?.content ?? '').split('\n').length} lines.`;
  // A task with a starter script: work on the starter instead of writing a solution from scratch.
  if (req.turn > 0 && hasStarter(req.history)) {
    const steps = suiteSteps(req, mode);
    const [thought, action, input] = steps[Math.min(req.turn, steps.length - 1)];
    return reply(
      thought,
      action,
      input,
      diagnose
        ? '1. read the starter, 2. run the diagnostics that fit its files, 3. fix what they reveal, 4. run it and submit.'
        : '1. copy the starter, 2. train it longer, 3. run it and submit.',
    );
  }
  const offered = req.actions ?? [];
  const plan = `1. look at the files${diagnose ? ', 2. check the data with diagnostics' : ''}, then solve with ${ladder.join(' then ')} and submit.`;
  const steps: Array<[string, string, Record<string, unknown>]> = [
    ['List the task files first.', 'List Files', { dir_path: 'public' }],
  ];
  if (mode === 'diagnose')
    for (const tool of DIAGNOSTICS.filter((d) => offered.includes(d)))
      steps.push([`Check the training table with ${tool}.`, tool, { path: 'public/train.csv' }]);
  ladder.forEach((rung, i) => {
    const file = `train_${rung}.py`;
    // Only the first script carries the kit; it saves it as mlekit.py for the later ones.
    steps.push([
      `Write a ${rung} solution that keeps the best validated submission.`,
      'Write File',
      { file_name: file, content: solveCode(rung, i > 0) },
    ]);
    steps.push([`Run the ${rung} solution.`, 'Execute Script', { script_name: file }]);
  });
  steps.push([
    'The submission is written.',
    'Final Answer',
    { final_answer: `solved with ${ladder.join(', ')}`, submission: 'submission.csv' },
  ]);
  const [thought, action, input] = steps[Math.min(req.turn, steps.length - 1)];
  return reply(thought, action, input, plan);
}
