// The reply format of SandMLE's released agent code (`prompt_format:
// sandmle-release`), so that its trajectories and the checkpoints trained on
// them meet the prompts they were made with. A reply reasons in
// <think>…</think>, then makes one <tool_call>: python (the code inside
// <code>…</code>, the tool named by the word `python` or by JSON naming
// PythonInterpreter) or the Score tool (JSON: {"name": "Score", "arguments":
// {…}}), which checks the submission; or ends with <answer>…</answer>.
// Observations come back wrapped in <tool_response>.
import type { Action, ParsedReply } from './parse.js';

const THINK = /<think>[\s\S]*?<\/think>/g;
const PYTHON_NAMES = new Set(['python', 'pythoninterpreter']);
// SynScore is the released name of the Score tool on synthetic tasks.
const SCORE_NAMES = new Set(['score', 'synscore']);
const TOOLS_HELP = 'use <tool_call>python<code>…</code></tool_call> or <tool_call>{"name": "Score", "arguments": {}}</tool_call>';

/** The tool calls after the reasoning; a last call left unclosed (a reply cut at a stop word) still counts. */
function toolCalls(rest: string): string[] {
  const calls = [...rest.matchAll(/<tool_call>([\s\S]*?)<\/tool_call>/g)].map((m) => m[1]);
  const tail = rest.replace(/<tool_call>[\s\S]*?<\/tool_call>/g, '');
  const open = tail.indexOf('<tool_call>');
  if (open >= 0) calls.push(tail.slice(open + '<tool_call>'.length));
  return calls;
}

function callAction(body: string): Action {
  // As in the release, any <code> block makes the call a python one, whatever names it.
  const code = [...body.matchAll(/<code>([\s\S]*?)(?:<\/code>|$)/g)].map((m) => m[1].replace(/^\n/, ''));
  const trimmed = body.trim();
  if (code.length) return code.join('\n').trim() ? { kind: 'code', code: code.join('\n') } : { kind: 'invalid', reason: 'the python call has no code inside <code></code>' };
  if (/^python\b/i.test(trimmed)) {
    const bare = trimmed.replace(/^python\b/i, '').replace(/^\n/, '');
    return bare.trim() ? { kind: 'code', code: bare } : { kind: 'invalid', reason: 'the python call has no code: put it inside <code></code> tags' };
  }
  let call: { name?: unknown; arguments?: unknown };
  try {
    call = JSON.parse(trimmed);
  } catch {
    return { kind: 'invalid', reason: `the tool call is not valid JSON with "name" and "arguments"; ${TOOLS_HELP}` };
  }
  const name = typeof call?.name === 'string' ? call.name.trim().toLowerCase() : '';
  const args = call.arguments && typeof call.arguments === 'object' ? (call.arguments as Record<string, unknown>) : {};
  if (PYTHON_NAMES.has(name)) {
    return typeof args.code === 'string' && args.code.trim() ? { kind: 'code', code: args.code } : { kind: 'invalid', reason: 'the python call has no code' };
  }
  if (SCORE_NAMES.has(name)) return { kind: 'validate', path: typeof args.path === 'string' && args.path.trim() ? args.path.trim() : 'submission.csv' };
  return { kind: 'invalid', reason: `unknown tool ${JSON.stringify(call?.name ?? null)}; ${TOOLS_HELP}` };
}

export function parseReleaseReply(text: string): ParsedReply {
  // The reasoning comes first: a reply that acts before it thinks is out of format.
  const think = /^\s*<think>[\s\S]*?<\/think>/.test(text);
  const rest = text.replace(THINK, '');
  const calls = toolCalls(rest);
  // The release ends on <answer>submission</answer>: the word names no file, so the usual one is graded.
  const answers = [...rest.matchAll(/<answer>\s*([\s\S]*?)\s*<\/answer>/g)].map((m) => m[1]);
  const count = calls.length + answers.length;
  let action: Action;
  if (count === 0) action = { kind: 'invalid', reason: `the reply holds no action: end it with one <tool_call> (${TOOLS_HELP}) or <answer>submission</answer>` };
  else if (count > 1) action = { kind: 'invalid', reason: `the reply holds ${count} actions; give exactly one <tool_call> or <answer> per turn` };
  else if (calls.length) action = callAction(calls[0]);
  else action = { kind: 'answer', path: /\.csv$/i.test(answers[0]) ? answers[0] : 'submission.csv' };
  return { action, formatOk: think && count === 1 && action.kind !== 'invalid' };
}

/** A reply in the release's format (what scripted policies write, and the inverse of parseReleaseReply). */
export function releaseReply(think: string, action: Exclude<Action, { kind: 'invalid' }>): string {
  const head = `<think>${think}</think>\n`;
  if (action.kind === 'code') return `${head}<tool_call>\npython\n<code>\n${action.code.replace(/\n?$/, '\n')}</code>\n</tool_call>`;
  if (action.kind === 'validate') return `${head}<tool_call>\n${JSON.stringify({ name: 'Score', arguments: action.path === 'submission.csv' ? {} : { path: action.path } })}\n</tool_call>`;
  return `${head}<answer>submission</answer>`;
}

/** An observation as the release returns it to the model. */
export const releaseObservation = (obs: string) => `<tool_response>\n${obs}\n</tool_response>`;
