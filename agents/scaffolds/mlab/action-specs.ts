// MLAgentBench's actions as the agent is told of them: each one's name, what it does and its arguments, and the
// check of a call's arguments against them before it runs.
import { RESEARCH_ACTIONS } from './research.js';

export interface ActionSpec {
  name: string;
  description: string;
  /** Argument names and what each holds (all strings but the line numbers). */
  input: Record<string, string>;
  required: readonly string[];
}

const spec = (
  name: string,
  description: string,
  input: Record<string, string>,
  required = Object.keys(input),
): ActionSpec => ({ name, description, input, required });

export const MLAB_ACTIONS: readonly ActionSpec[] = [
  spec('List Files', 'List the files in a folder of the workspace (public/ holds the task files).', {
    dir_path: 'a folder relative to the workspace, e.g. "." or "public"',
  }),
  spec('Read File', 'Read a whole text file.', { file_name: 'a file relative to the workspace' }),
  spec('Write File', 'Write a file, replacing it if it exists (Undo Edit Script restores it).', {
    file_name: 'a file relative to the workspace',
    content: 'the whole text of the file',
  }),
  spec('Append File', 'Append text to the end of a file.', {
    file_name: 'a file relative to the workspace',
    content: 'the text to append',
  }),
  spec('Copy File', 'Copy a file to a new name in the workspace.', {
    source: 'the file to copy',
    destination: 'the new file name',
  }),
  spec('Inspect Script Lines', 'Show lines of a script, at most 100 at a time.', {
    script_name: 'a file relative to the workspace',
    start_line_number: 'first line (1-based)',
    end_line_number: 'last line',
  }),
  spec('Execute Script', 'Run a Python script in the workspace and see its output.', {
    script_name: 'a .py file relative to the workspace',
  }),
  spec(
    'Python REPL',
    'Run Python commands in the workspace and see what they print. Each call starts a fresh interpreter: nothing is kept from one call to the next.',
    { command: 'valid Python' },
  ),
  spec('Request Help', 'Ask a human for help, only when the actions and files cannot do what is needed.', {
    request: 'what you need, in detail',
  }),
  spec('Undo Edit Script', 'Put back the text a file had before its last write, append, copy or edit.', {
    script_name: 'the file',
  }),
  spec(
    'Edit Script (AI)',
    'Have the model edit a script by an instruction; the result is saved under save_name and the diff is shown.',
    {
      script_name: 'the script to edit (empty or missing: a new one)',
      edit_instruction: 'what to change, step by step',
      save_name: 'where to save the edited script',
    },
  ),
  spec(
    'Edit Script Segment (AI)',
    'Have the model edit lines start_line_number to end_line_number of a script by an instruction; the whole script with the edited segment is saved under save_name and the diff is shown.',
    {
      script_name: 'the script to edit',
      start_line_number: 'first line of the segment (1-based)',
      end_line_number: 'last line of the segment',
      edit_instruction: 'what to change, step by step',
      save_name: 'where to save the edited script',
    },
  ),
  spec('Understand File', 'Have the model read a file and report what you ask for.', {
    file_name: 'the file',
    things_to_look_for: 'what to look for and report',
  }),
  ...RESEARCH_ACTIONS.map((a) => spec(a.name, a.description, a.input)),
  spec(
    'Final Answer',
    'End the episode; the submission file is graded.',
    { final_answer: 'a short summary of what was done', submission: 'the submission file (default submission.csv)' },
    ['final_answer'],
  ),
];

/** An argument as text: a string as it is, a missing one empty, anything else written out. */
export const str = (args: Record<string, unknown>, k: string): string =>
  typeof args[k] === 'string' ? (args[k] as string) : args[k] === undefined ? '' : String(args[k]);

/** The argument problems of a call, or null. */
export function argProblem(s: ActionSpec, args: Record<string, unknown>): string | null {
  const missing = s.required.filter(
    (k) =>
      args[k] === undefined ||
      args[k] === null ||
      (s.name !== 'Edit Script (AI)' && k !== 'content' && k !== 'command' && str(args, k).trim() === ''),
  );
  if (missing.length)
    return `${s.name} needs ${missing.map((k) => `"${k}"`).join(', ')} in its Action Input (it takes ${Object.keys(s.input).join(', ')})`;
  const unknown = Object.keys(args).filter((k) => !(k in s.input));
  if (unknown.length)
    return `${s.name} takes no ${unknown.map((k) => `"${k}"`).join(', ')} (it takes ${Object.keys(s.input).join(', ')})`;
  return null;
}
