// The reply format of SandMLE's released agent code (`prompt_format:
// sandmle-release`), read the way that code reads it (deepresearch_agent.py,
// MultiTurnReactAgent._run), so that trajectories and the checkpoints
// trained on them meet the prompts and the parser they were made with:
//   - A reply that holds <tool_call> makes its first call (up to the first
//     </tool_call>, or to the end when it is left open). A call whose text
//     says `python` (any case) or holds <code> runs Python: the last <code>
//     block of the whole reply, or what follows an unclosed <code>, or the
//     call's text with the word `python` taken out.
//   - Any other call is JSON read by json5 (single quotes, trailing commas).
//     The release imports json5 inside the loop, only on a turn whose reply
//     makes a call, names no python or <code> anywhere and holds `"name":`;
//     until such a turn, a JSON call fails as invalid JSON. Its tools are
//     `PythonInterpreter` and `Score`, by exact name; Score needs
//     `competition_id`.
//   - <answer>…</answer> ends the episode, after the call when the reply
//     makes one too; the answer's text names no file: submission.csv is graded.
//   - A reply with neither gets no tool response in the release (mlepipe
//     shows a format error that is not a tool response).
// Observations come back wrapped in <tool_response>. The conversation keeps a
// reply cut the same way (storedReply); the turn keeps what was generated.
import JSON5 from 'json5';
import type { Action, ParsedReply } from './parse.js';
import { TOOL_JSON_ERROR, scoreArgumentError, toolNotFound } from './release-text.js';

/** A release reply read into an action, with what the release does besides. */
export interface ReleaseReply extends ParsedReply {
  /** The reply made a tool call, so the release answers it with a tool response. */
  toolCall: boolean;
  /** The reply also holds <answer>: the episode ends after its call. */
  answers: boolean;
}

const PYTHON_CODE_LAST = /<code>(?![\s\S]*<code>)([\s\S]*?)<\/code>/gi;
const PYTHON_CODE_ALL = /<code>([\s\S]*?)<\/code>/gi;
const TAGS = ['<code>', '</code>', '<tool_call>', '</tool_call>', '<think>', '</think>'];

/** The code the release runs for a python call (its regex and fallbacks, in its order). */
function pythonCode(content: string, callText: string): string {
  let blocks: string[];
  if (content.includes('<code>') && content.includes('</code>')) {
    blocks = [...content.matchAll(PYTHON_CODE_LAST)].map((m) => m[1]);
    if (!blocks.length) blocks = [...content.matchAll(PYTHON_CODE_ALL)].map((m) => m[1]);
  } else if (content.includes('<code>')) {
    blocks = [pyStrip(content.split('<code>')[1])];
  } else {
    blocks = [pyStrip(callText.split('python').join(''))];
  }
  let code = blocks.map(pyStrip).filter(Boolean).join('\n\n');
  for (const tag of TAGS) code = code.split(tag).join('');
  return code;
}

// Python's str.strip() removes these; JavaScript's trim() a slightly different set.
const PY_SPACE = '\\t\\n\\x0b\\x0c\\r\\x1c-\\x1f \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000';
const PY_STRIP = new RegExp(`^[${PY_SPACE}]+|[${PY_SPACE}]+$`, 'g');
export const pyStrip = (s: string) => s.replace(PY_STRIP, '');

/** The first tool call's text, as the release cuts it out. */
function callText(content: string): string {
  const after = content.split('<tool_call>')[1];
  if (!content.includes('</tool_call>')) return pyStrip(after.split('<think>').join('').split('</think>').join(''));
  return pyStrip(after.split('</tool_call>')[0]);
}

/** A JSON tool call: the tool and its arguments, or the release's answer to a call it cannot make. */
function jsonCall(text: string, taskId: string, json5Loaded: boolean): Action {
  if (!json5Loaded) return { kind: 'invalid', reason: TOOL_JSON_ERROR };
  let call: unknown;
  try {
    call = JSON5.parse(text);
  } catch {
    return { kind: 'invalid', reason: TOOL_JSON_ERROR };
  }
  // tool_call.get(...) fails on anything but an object.
  if (!call || typeof call !== 'object' || Array.isArray(call)) return { kind: 'invalid', reason: TOOL_JSON_ERROR };
  const { name = '', arguments: args = {} } = call as { name?: unknown; arguments?: unknown };
  if (name !== 'Score') return { kind: 'invalid', reason: toolNotFound(name) };
  const a = args && typeof args === 'object' && !Array.isArray(args) ? (args as Record<string, unknown>) : undefined;
  const problem = scoreArgumentError(a, taskId);
  if (problem) return { kind: 'invalid', reason: problem };
  const path = typeof a!.path === 'string' && a!.path ? a!.path : 'submission.csv';
  return { kind: 'validate', path };
}

/**
 * A reader of one episode's replies: it keeps what the release keeps from
 * turn to turn (whether json5 has been imported yet).
 */
export function releaseParser(taskId: string): (text: string) => ReleaseReply {
  let json5Loaded = false;
  return (raw) => {
    // The release decides on json5 before it cuts a hallucinated tool response off the reply.
    const lower = raw.toLowerCase();
    if (
      raw.includes('<tool_call>') &&
      !lower.includes('python') &&
      !lower.includes('<code>') &&
      raw.includes('"name":')
    )
      json5Loaded = true;
    const content = cutReply(raw);
    const answers = content.includes('<answer>') && content.includes('</answer>');
    const think = /^\s*<think>[\s\S]*?<\/think>/.test(raw);
    if (content.includes('<tool_call>')) {
      const text = callText(content);
      const lowerText = text.toLowerCase();
      const action: Action =
        lowerText.includes('python') || lowerText.includes('<code>')
          ? { kind: 'code', code: pythonCode(content, text) }
          : jsonCall(text, taskId, json5Loaded);
      const calls = content.split('<tool_call>').length - 1;
      return {
        action,
        toolCall: true,
        answers,
        formatOk: think && calls === 1 && !answers && action.kind !== 'invalid',
      };
    }
    if (answers)
      return { action: { kind: 'answer', path: 'submission.csv' }, toolCall: false, answers: true, formatOk: think };
    return {
      action: {
        kind: 'invalid',
        reason: `the reply holds no action: end it with one <tool_call> (${TOOLS_HELP}) or <answer>submission</answer>`,
      },
      toolCall: false,
      answers: false,
      formatOk: false,
    };
  };
}

const TOOLS_HELP =
  'python with the code inside <code></code>, or {"name": "Score", "arguments": {"competition_id": …}}';

/** One reply read on its own (a fresh episode's first turn). */
export const parseReleaseReply = (text: string, taskId = 'task'): ReleaseReply => releaseParser(taskId)(text);

/** A reply in the release's format (what scripted policies write, and what releaseParser reads back). */
export function releaseReply(think: string, action: Exclude<Action, { kind: 'invalid' }>, taskId: string): string {
  const head = `<think>${think}</think>\n`;
  if (action.kind === 'code')
    return `${head}<tool_call>\npython\n<code>\n${action.code.replace(/\n?$/, '\n')}</code>\n</tool_call>`;
  if (action.kind === 'validate') {
    const args = { competition_id: taskId, ...(action.path === 'submission.csv' ? {} : { path: action.path }) };
    return `${head}<tool_call>\n${JSON.stringify({ name: 'Score', arguments: args })}\n</tool_call>`;
  }
  return `${head}<answer>submission</answer>`;
}

/** A reply up to its first <tool_response>: what the release reads, and keeps, of a reply that imagined one. */
export function cutReply(raw: string): string {
  const at = raw.indexOf('<tool_response>');
  return at >= 0 ? raw.slice(0, at) : raw;
}

/** A reply as the release keeps it in the conversation: cut, and stripped when it makes a tool call. */
export function storedReply(raw: string): string {
  const content = cutReply(raw);
  return content.includes('<tool_call>') ? pyStrip(content) : content;
}

/** An observation as the release returns it to the model. */
export const releaseObservation = (obs: string) => `<tool_response>\n${obs}\n</tool_response>`;
