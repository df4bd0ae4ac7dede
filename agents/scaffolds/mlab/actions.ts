// MLAgentBench's 17 actions, with the argument names its agents are prompted
// with and the observations it answers with. File actions run on the host
// inside the workspace (files.ts); Execute Script and Python REPL run in the
// sandbox; the AI actions (Edit Script (AI), Edit Script Segment (AI),
// Understand File, Reflection, Retrieval from Research Log) ask the model
// `action_model` names, or the policy itself (research.ts). Each write keeps
// the file's previous text so that Undo Edit Script can put it back.
import { appendFile, copyFile, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Session } from '../../../sandbox/index.js';
import { clip, observation } from '../execute.js';
import { unifiedDiff } from './diff.js';
import { ActionError, listFiles, readPath, readText, writePath, type Roots } from './files.js';
import { RESEARCH_ACTIONS, runResearchAction, type AskPurpose } from './research.js';
import { str } from './action-specs.js';

// Named here too, so that what runs actions imports from one place.
export { argProblem, MLAB_ACTIONS, type ActionSpec } from './action-specs.js';

const INSPECT_MAX = 100;

/** The code of a model's reply: its first fenced block, else the whole reply. */
const fenced = (reply: string) => /```(?:python|py)?[ \t]*\n([\s\S]*?)```/.exec(reply)?.[1] ?? reply;

/** MLAgentBench's answer to an edit: where it was saved and the diff against the text before. */
function edited(shown: string, before: string, after: string, env: ActionEnv): string {
  const diff = unifiedDiff(before, after, shown, shown);
  return clip(
    `The edited file is saved to ${shown}. Here is the diff, please check if the edit is correct and desirable:\n\n${diff || '(no change)'}`,
    env.observationChars,
  );
}

export interface ActionEnv {
  roots: Roots;
  session: Session;
  /** Milliseconds an execution may run now (the step limit cut to what is left of the episode). */
  timeoutMs(): number;
  observationChars: number;
  /** Asks the AI actions' model (action_model, else the policy); gives its reply text. */
  ask(
    purpose: AskPurpose,
    prompt: string,
    file: { name: string; content: string; instruction: string },
  ): Promise<string>;
  /** The task's description: the research problem Reflection and Retrieval are told about. */
  problem: string;
  /** Each file's earlier texts, newest last; null: the file did not exist. */
  backups: Map<string, Array<string | null>>;
}

export interface ActionOutcome {
  observation: string;
  exit_code?: number | null;
  timed_out?: boolean;
  /** Execute Script: the script's text, recorded as the turn's code. */
  code?: string;
}

async function previous(path: string): Promise<string | null> {
  return readFile(path, 'utf8').catch(() => null);
}

function keep(env: ActionEnv, shown: string, before: string | null): void {
  const stack = env.backups.get(shown) ?? [];
  stack.push(before);
  env.backups.set(shown, stack);
}

type Handler = (args: Record<string, unknown>, env: ActionEnv, name: string) => Promise<ActionOutcome>;

async function writeOrAppend(args: Record<string, unknown>, env: ActionEnv, name: string): Promise<ActionOutcome> {
  const { path, shown } = await writePath(env.roots, args.file_name);
  const before = await previous(path);
  const content = str(args, 'content');
  keep(env, shown, before);
  if (name === 'Write File') await writeFile(path, content);
  else await appendFile(path, content);
  return {
    observation: `${name === 'Write File' ? 'wrote' : 'appended'} ${content.length} characters to ${shown}`,
  };
}

async function copyAction(args: Record<string, unknown>, env: ActionEnv): Promise<ActionOutcome> {
  const src = await readPath(env.roots, args.source);
  const dst = await writePath(env.roots, args.destination);
  keep(env, dst.shown, await previous(dst.path));
  await copyFile(src.path, dst.path);
  return { observation: `copied ${src.shown} to ${dst.shown}` };
}

async function inspectLines(args: Record<string, unknown>, env: ActionEnv): Promise<ActionOutcome> {
  const { text, shown } = await readText(env.roots, args.script_name);
  const lines = text.split('\n');
  const start = Math.max(1, Math.floor(Number(args.start_line_number) || 1));
  const end = Math.min(lines.length, Math.floor(Number(args.end_line_number) || start + INSPECT_MAX - 1));
  if (end < start) throw new ActionError(`${shown} has ${lines.length} lines; lines ${start}-${end} are empty`);
  if (end - start + 1 > INSPECT_MAX) throw new ActionError(`at most ${INSPECT_MAX} lines at a time`);
  return {
    observation: clip(
      `Here are the lines (the file ends at line ${lines.length}):\n\n${lines.slice(start - 1, end).join('\n')}`,
      env.observationChars,
    ),
  };
}

async function executeScript(args: Record<string, unknown>, env: ActionEnv): Promise<ActionOutcome> {
  const { text, shown } = await readText(env.roots, args.script_name);
  // public/ is mounted at workspace/public inside the jail, so the checked relative name is the same there.
  const rel = shown;
  if (!rel.endsWith('.py')) throw new ActionError(`${shown}: Execute Script runs Python files (.py)`);
  const timeout = env.timeoutMs();
  const r = await env.session.run({ file: rel }, { timeoutMs: timeout });
  return {
    observation: `The script has been executed. Here is the output:\n${observation(r, env.observationChars, timeout)}`,
    exit_code: r.timedOut ? null : r.exitCode,
    timed_out: r.timedOut,
    code: text,
  };
}

async function undoEdit(args: Record<string, unknown>, env: ActionEnv): Promise<ActionOutcome> {
  const { path, shown } = await writePath(env.roots, args.script_name);
  const stack = env.backups.get(shown);
  if (!stack?.length) throw new ActionError(`${shown}: nothing to undo`);
  const before = stack.pop()!;
  if (before === null) {
    await rm(path, { force: true });
    return { observation: `${shown} did not exist before its last change; it is removed` };
  }
  await writeFile(path, before);
  return { observation: `${shown} restored; its text now:\n${clip(before, env.observationChars)}` };
}

async function editScript(args: Record<string, unknown>, env: ActionEnv): Promise<ActionOutcome> {
  const script = str(args, 'script_name').trim();
  const content = script ? (await readText(env.roots, script).catch(() => ({ text: '' }))).text : '';
  const instruction = str(args, 'edit_instruction');
  const dst = await writePath(env.roots, args.save_name);
  const prompt = `Edit this Python script as instructed and reply with the whole edited script in one \`\`\`python block.\n\nScript ${script || '(new)'}:\n\`\`\`python\n${content}\n\`\`\`\n\nInstruction: ${instruction}`;
  const reply = await env.ask('edit', prompt, { name: script, content, instruction });
  const code = fenced(reply);
  keep(env, dst.shown, await previous(dst.path));
  await writeFile(dst.path, code);
  return { observation: edited(dst.shown, content, code, env) };
}

async function editSegment(args: Record<string, unknown>, env: ActionEnv): Promise<ActionOutcome> {
  const { text, shown } = await readText(env.roots, args.script_name);
  const lines = text.split('\n');
  const start = Math.max(1, Math.floor(Number(args.start_line_number)));
  const end = Math.min(lines.length, Math.floor(Number(args.end_line_number)));
  if (!Number.isFinite(start) || !Number.isFinite(end) || end < start)
    throw new ActionError(
      `start_line_number and end_line_number must be line numbers with start <= end (${shown} has ${lines.length} lines)`,
    );
  const segment = lines.slice(start - 1, end).join('\n');
  const instruction = str(args, 'edit_instruction');
  const dst = await writePath(env.roots, args.save_name);
  const prompt = `Edit this segment (lines ${start}-${end}) of the Python script ${shown} as instructed, making no other change, and reply with the whole edited segment in one \`\`\`python block.\n\n\`\`\`python\n${segment}\n\`\`\`\n\nInstruction: ${instruction}`;
  const reply = await env.ask('edit', prompt, { name: shown, content: `${segment}\n`, instruction });
  const code = [...lines.slice(0, start - 1), fenced(reply).replace(/\n$/, ''), ...lines.slice(end)].join('\n');
  keep(env, dst.shown, await previous(dst.path));
  await writeFile(dst.path, code);
  return { observation: edited(dst.shown, text, code, env) };
}

async function understandFile(args: Record<string, unknown>, env: ActionEnv): Promise<ActionOutcome> {
  const { text, shown } = await readText(env.roots, args.file_name);
  const look = str(args, 'things_to_look_for');
  // The model reads at most what an observation could hold many times over; the head and tail stay.
  const body = clip(text, env.observationChars * 8);
  const reply = await env.ask(
    'understand',
    `Read the file ${shown} and report: ${look}\nAnswer only from what the file shows.\n\n${body}`,
    { name: shown, content: text, instruction: look },
  );
  return { observation: clip(reply.trim() || '(the model gave no answer)', env.observationChars) };
}

async function pythonRepl(args: Record<string, unknown>, env: ActionEnv): Promise<ActionOutcome> {
  // A file of its own under the scaffold's folder, run like a script (in the jail, in the workspace).
  const rel = '.mlab/repl.py';
  await mkdir(join(env.roots.workspace, '.mlab'), { recursive: true });
  await writeFile(join(env.roots.workspace, rel), str(args, 'command'));
  const timeout = env.timeoutMs();
  const r = await env.session.run({ file: rel }, { timeoutMs: timeout });
  return {
    observation: observation(r, env.observationChars, timeout),
    exit_code: r.timedOut ? null : r.exitCode,
    timed_out: r.timedOut,
  };
}

/** What each action does; the research actions (research.ts) and Final Answer (the scaffold's) are not here. */
const HANDLERS = {
  'List Files': async (args, env) => ({ observation: await listFiles(env.roots, str(args, 'dir_path') || '.') }),
  'Read File': async (args, env) => ({
    observation: clip((await readText(env.roots, args.file_name)).text, env.observationChars),
  }),
  'Write File': writeOrAppend,
  'Append File': writeOrAppend,
  'Copy File': copyAction,
  'Inspect Script Lines': inspectLines,
  'Execute Script': executeScript,
  'Undo Edit Script': undoEdit,
  'Edit Script (AI)': editScript,
  'Edit Script Segment (AI)': editSegment,
  'Understand File': understandFile,
  'Python REPL': pythonRepl,
  // No one answers in an automatic run; MLAgentBench's own would wait for a person at the terminal.
  'Request Help': () =>
    Promise.resolve({
      observation: 'No human is attached to this run, so no help can be given; continue with the actions available.',
    }),
} satisfies Record<string, Handler>;

/** Runs one file action; refusals come back as ActionError (the observation says why). */
export async function runAction(name: string, args: Record<string, unknown>, env: ActionEnv): Promise<ActionOutcome> {
  const handler: Handler | undefined = Object.hasOwn(HANDLERS, name)
    ? HANDLERS[name as keyof typeof HANDLERS]
    : undefined;
  if (handler) return handler(args, env, name);
  if (RESEARCH_ACTIONS.some((a) => a.name === name)) return runResearchAction(name, args, env);
  throw new ActionError(`unknown action "${name}"`);
}
