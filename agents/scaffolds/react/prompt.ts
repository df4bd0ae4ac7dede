// The opening of a ReAct episode: the system prompt (limits, the task's public files) and the task's description.
// The scaffold sends it, and the verl export writes it into each row, so the policy trains on the very prompt it is
// evaluated with; one composition keeps the two from drifting apart.
import { renderPrompt } from '../../factory/answers.js';
import type { ChatMessage } from '../../llm/client.js';
import { publicFilesText, sampleName } from '../public.js';
import type { TaskView } from '../types.js';

export interface ReactPromptLimits {
  maxTurns: number;
  /** τ_max in whole seconds, as the prompt states it. */
  stepSeconds: number;
}

/** The system and user messages that open an episode; `release` writes the released SandMLE code's prompt. */
export function reactMessages(
  task: Pick<TaskView, 'id' | 'description' | 'files' | 'sample'>,
  limits: ReactPromptLimits,
  release = false,
): ChatMessage[] {
  return [
    {
      role: 'system',
      content: renderPrompt(release ? 'react/system-release' : 'react/system', {
        max_turns: limits.maxTurns,
        step_timeout: limits.stepSeconds,
        files: publicFilesText(task),
        sample: sampleName(task),
        ...(release ? { competition_id: task.id } : {}),
      }),
    },
    { role: 'user', content: renderPrompt('react/task', { description: task.description.trim() }) },
  ];
}
