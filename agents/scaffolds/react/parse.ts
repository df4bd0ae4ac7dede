// Reading a ReAct reply (SandMLE's format): <think>…</think>, then exactly
// one action: a fenced python block to execute, <answer>FILE</answer> to
// finish, or <validate>FILE</validate> to check the submission's format.
export type Action =
  | { kind: 'code'; code: string }
  | { kind: 'answer'; path: string }
  | { kind: 'validate'; path: string }
  | { kind: 'invalid'; reason: string };

export interface ParsedReply {
  action: Action;
  /** Reasoning tags present and exactly one action: the `format` reward counts these. */
  formatOk: boolean;
}

export function parseReply(text: string): ParsedReply {
  const think = /<think>[\s\S]*?<\/think>/.test(text);
  // What the model wrote after its reasoning is where the action lives.
  const rest = text.replace(/<think>[\s\S]*?<\/think>/g, '');
  const blocks = [...rest.matchAll(/```(?:python|py)?[ \t]*\n([\s\S]*?)```/g)].map((m) => m[1]);
  const answers = [...rest.matchAll(/<answer>\s*([^<]*?)\s*<\/answer>/g)].map((m) => m[1]);
  const validates = [...rest.matchAll(/<validate>\s*([^<]*?)\s*<\/validate>/g)].map((m) => m[1]);
  const count = blocks.length + answers.length + validates.length;
  let action: Action;
  if (count === 0)
    action = {
      kind: 'invalid',
      reason:
        'the reply holds no action: end it with one ```python block, <validate>submission.csv</validate> or <answer>submission.csv</answer>',
    };
  else if (count > 1)
    action = { kind: 'invalid', reason: `the reply holds ${count} actions; give exactly one per turn` };
  else if (blocks.length) action = { kind: 'code', code: blocks[0] };
  else if (answers.length)
    action = answers[0] ? { kind: 'answer', path: answers[0] } : { kind: 'invalid', reason: '<answer> names no file' };
  else
    action = validates[0]
      ? { kind: 'validate', path: validates[0] }
      : { kind: 'invalid', reason: '<validate> names no file' };
  return { action, formatOk: think && count === 1 && action.kind !== 'invalid' };
}
