// The opening of an mlab episode: the actions and the diagnostic tools this rollout offers, and the task. The
// scaffold sends it, and the verl export writes it into each row to size verl's prompt length.
import type { ToolSpec } from '../../../tools/index.js';
import { renderPrompt } from '../../factory/answers.js';
import type { ChatMessage } from '../../llm/client.js';
import { publicFilesText, sampleName } from '../public.js';
import type { EpisodeLimits, TaskView } from '../types.js';
import { MLAB_ACTIONS } from './action-specs.js';
import { chooseTools, describeTool, dropTools, type ToolChoice } from './tools.js';

/** The tools a rollout offers: the choice for the task's domain, less its seeded dropout. */
export function rolloutTools(
  opts: { tools: ToolChoice; toolDropout: number; seed: number },
  task: TaskView,
  policy: string,
  sample: number,
): ToolSpec[] {
  return dropTools(
    chooseTools(opts.tools, task.meta.domain ?? task.meta.modality),
    opts.toolDropout,
    opts.seed,
    task.id,
    policy,
    sample,
  );
}

/** The episode's first two messages: the system prompt with the actions, the offered tools and the task, then "Begin." */
export function mlabMessages(
  task: TaskView,
  limits: Pick<EpisodeLimits, 'maxTurns' | 'stepTimeoutMs'>,
  tools: readonly ToolSpec[],
): ChatMessage[] {
  const actions = MLAB_ACTIONS.map(
    (a) =>
      `- ${a.name}: ${a.description}\n  Action Input: {${Object.entries(a.input)
        .map(([k, v]) => `"${k}": ${v}`)
        .join('; ')}}`,
  ).join('\n');
  const toolText = tools.length
    ? `\nDiagnostic tools (also actions; file arguments are relative to the workspace):\n${tools.map(describeTool).join('\n')}\n`
    : '';
  return [
    {
      role: 'system',
      content: renderPrompt('mlab/system', {
        description: task.description.trim(),
        actions,
        tools: toolText,
        max_steps: limits.maxTurns,
        step_timeout: Math.round(limits.stepTimeoutMs / 1000),
        files: publicFilesText(task),
        sample: sampleName(task),
      }),
    },
    { role: 'user', content: 'Begin.' },
  ];
}
