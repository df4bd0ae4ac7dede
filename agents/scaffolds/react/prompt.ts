// The opening of a ReAct episode: the system prompt (limits, the task's public files) and the task's description.
// The scaffold sends it, and the verl export writes it into each row, so the policy trains on the very prompt it is
// evaluated with; one composition keeps the two from drifting apart.
import { dirname } from 'node:path';
import { renderPrompt } from '../../factory/answers.js';
import type { ChatMessage } from '../../llm/client.js';
import { publicFilesText, sampleName } from '../public.js';
import type { TaskView } from '../types.js';
import { pyStrip } from './release.js';
import type { ReleaseOptions } from './release-options.js';
import { fileLine, filesHeading } from './release-text.js';

export interface ReactPromptLimits {
  maxTurns: number;
  /** τ_max in whole seconds, as the prompt states it. */
  stepSeconds: number;
}

/** The released format's prompt: its options, and the task's public/ folder as the agent's code sees it. */
export interface ReleasePrompt {
  options: ReleaseOptions;
  /** An absolute path without a trailing slash (the jail's /workspace/public). */
  datasetDir: string;
}

type PromptTask = Pick<TaskView, 'id' | 'description' | 'files' | 'sample'>;

/** The system and user messages that open an episode; `release` writes the released SandMLE code's prompt. */
export function reactMessages(task: PromptTask, limits: ReactPromptLimits, release?: ReleasePrompt): ChatMessage[] {
  const texts = release?.options.texts;
  const system = texts
    ? texts.system + release.options.date
    : renderPrompt(release ? 'react/system-release' : 'react/system', {
        max_turns: limits.maxTurns,
        step_timeout: limits.stepSeconds,
        files: publicFilesText(task),
        sample: sampleName(task),
        ...(release ? { competition_id: task.id } : {}),
      });
  const user =
    release?.options.userPrompt === 'release'
      ? releaseUserPrompt(task, limits, release)
      : renderPrompt('react/task', { description: task.description.trim() });
  return [
    { role: 'system', content: system },
    { role: 'user', content: user },
  ];
}

/**
 * The released user message (custom_evaluate.py, build_tasks): the competition id, the description and
 * the dataset folder's files, the folder, and the requirements with the turn limit. The released
 * templates put the folder at `{data_root}/{id}/prepared/public`; here it is the task's public/ as the
 * agent sees it, so that path is written as that folder before the placeholders are filled in the
 * release's order.
 */
function releaseUserPrompt(task: PromptTask, limits: ReactPromptLimits, release: ReleasePrompt): string {
  const dir = release.datasetDir;
  const described = `${pyStrip(task.description)}\n\n${filesListing(dir, task.files ?? [])}`;
  const texts = release.options.texts;
  if (!texts)
    return renderPrompt('react-release/task', {
      competition_id: task.id,
      description: described,
      dataset_dir: dir,
      max_turns: limits.maxTurns,
      step_timeout: limits.stepSeconds,
    });
  const fill = (s: string, from: string, to: string) => s.split(from).join(to);
  let specific = fill(texts.task, '{data_root}/{id}/prepared/public', dir);
  specific = fill(fill(fill(specific, '{id}', task.id), '{task_description}', described), '{data_root}', dirname(dir));
  return fill(fill(texts.user, '{specific_task_description}', specific), '{max_llm_calls}', String(limits.maxTurns));
}

/** The folder's entries by name as Python sorts them, any whose name holds "zip" left out, each by its full path. */
function filesListing(dir: string, files: readonly string[]): string {
  const entries = files
    .map((f) => ({ name: f.replace(/\/$/, ''), folder: f.endsWith('/') }))
    .filter((e) => !e.name.includes('zip'))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return `${filesHeading(dir)}\n${entries.map((e) => fileLine(`${dir}/${e.name}${e.folder ? '/' : ''}`)).join('\n')}`;
}
