// The released code's rules besides its reply format (release-options.ts):
// the observation of an execution, the cut of an imagined tool response, the
// pruning past the context budget and the user message's fields, each worked
// by hand from the release's code (deepresearch_tools.py, deepresearch_agent.py,
// custom_evaluate.py).
import { releaseFormatRate } from '../../reward-inputs.js';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChatMessage } from '../../llm/client.js';
import type { Policy, PolicyRequest } from '../../policies/types.js';
import type { EpisodeContext, Validation } from '../types.js';
import { releasePrune, releaseTokens } from './context.js';
import { react } from './index.js';
import { reactMessages } from './prompt.js';
import { releaseExecution, releaseTail } from './release-observation.js';
import { RELEASE_DEFAULTS, type ReleaseOptions } from './release-options.js';
import { storedReply } from './release.js';

const lines = (n: number, tag = 'l') => Array.from({ length: n }, (_, i) => `${tag}${i + 1}`).join('\n');

test('observations: the variants of the execution tool, by which tails are empty and whether submission.csv is there', async () => {
  const ws = await mkdtemp(join(tmpdir(), 'mlepipe-release-obs-'));
  try {
    const obs = (stdout: string, stderr: string) => releaseExecution({ stdout, stderr }, ws, '/workspace');
    assert.is(obs('hi\n', 'warn\n'), '[Output]\nhi\n\n[Stderr]\nwarn\n\nNote: submission.csv not found.');
    assert.is(obs('hi\n', ''), '[Output]\nhi\n\nNote: no stderr, and submission.csv not found.');
    assert.is(obs('', 'Traceback\n'), 'No stdout and submission.csv not found. Stderr:\nTraceback');
    // Both empty and no submission: the stdout log's own last lines, here none.
    assert.is(obs('', ''), '[Output]\n');
    assert.is(obs('  \n\n', ''), '[Output]\n  \n');
    await writeFile(join(ws, 'submission.csv'), 'id,y\n');
    const at = '/workspace/submission.csv';
    assert.is(obs('hi', 'warn'), `[Output]\nhi\n\n[Stderr]\nwarn\n\nNote: submission.csv found at ${at}.`);
    assert.is(obs('hi', ''), `[Output]\nhi\n\nNote: no stderr, and submission.csv found at ${at}.`);
    assert.is(obs('', 'warn'), `No stdout, but submission.csv found at ${at}. Stderr:\nwarn`);
    assert.is(obs('', ''), `No stdout, but submission.csv found at ${at}.`);
  } finally {
    await rm(ws, { recursive: true, force: true });
  }
});

test('observations: the last 20 of at most 200 lines, stripped, with the count of those cut', () => {
  assert.is(releaseTail(`\n${lines(20)}\n\n`), lines(20));
  const cut = releaseTail(lines(25)).split('\n');
  assert.equal(cut.slice(0, 20), lines(25).split('\n').slice(5));
  assert.is(cut[20], '...[truncated 5 lines, see log for full output]');
  // The job service hands back 200 lines at most: the count is of those.
  assert.match(releaseTail(lines(500)), /\.\.\.\[truncated 180 lines, see log for full output\]$/);
  assert.match(releaseTail(lines(500)), /^l481\n/);
});

test('cut: the conversation keeps a reply up to its first <tool_response>, stripped when it calls a tool', () => {
  const call = '<think>t</think>\n<tool_call>\npython\n<code>\nprint(1)\n</code>\n</tool_call>';
  assert.is(storedReply(`${call}\n<tool_response>\nimagined\n</tool_response>\nmore`), call);
  assert.is(storedReply(`  ${call}  \n`), call);
  // Without a call the release keeps the cut text as it is.
  assert.is(storedReply('<think>x</think> say <tool_response>y'), '<think>x</think> say ');
});

const m = (role: ChatMessage['role'], content: string): ChatMessage => ({ role, content });

test("pruning: the release's estimate, then every tool turn whose response says error in any case goes for good", () => {
  // A quarter of the characters of the contents joined by newlines, in code points.
  assert.is(releaseTokens([m('system', 'a'.repeat(6)), m('user', '😀😀')]), 2);
  assert.is(releaseTokens([m('system', '')]), 1);
  const pad = 'x'.repeat(400);
  const conv = [
    m('system', 'sys'),
    m('user', 'task'),
    m('assistant', `<tool_call>a0${pad}`),
    m('user', '<tool_response>\nTraceback: ValueError\n</tool_response>'),
    m('assistant', `<tool_call>a1${pad}`),
    m('user', '<tool_response>\nfine\n</tool_response>'),
    m('assistant', `no call a2${pad}`),
    m('user', 'format error: error'),
    m('assistant', `<tool_call>a3${pad}`),
    m('user', '<tool_response>\nan ERROR here\n</tool_response>'),
  ];
  assert.equal(releasePrune(conv, 10_000), { messages: conv, removed: 0 });
  const pruned = releasePrune(conv, 300);
  // a0 and a3 go with their responses; a reply without a call and its message stay whatever they say.
  assert.equal(
    pruned.messages.map((x) => x.content.slice(0, 16)),
    [
      'sys',
      'task',
      `<tool_call>a1${pad.slice(0, 3)}`,
      '<tool_response>\n',
      `no call a2${pad.slice(0, 6)}`,
      'format error: er',
    ],
  );
  assert.is(pruned.removed, 2);
});

test('pruning: with nothing that failed and still over, the system prompt, the task and the last two messages stay', () => {
  const pad = 'y'.repeat(400);
  const conv = [m('system', 's'), m('user', 't')];
  for (let i = 0; i < 4; i++) conv.push(m('assistant', `<tool_call>a${i}${pad}`), m('user', `<tool_response>ok${i}`));
  const pruned = releasePrune(conv, 150);
  assert.equal(pruned.messages, [conv[0], conv[1], conv[8], conv[9]]);
  assert.is(pruned.removed, 3);
});

const TASK = {
  id: 'cactus',
  description: '\n  Find the cactus.  \n',
  files: ['b.csv', 'a/', 'train.zip', 'a.csv', 'unzipped/', 'description.md'],
  sample: 'sample_submission.csv',
};

test("user prompt: the competition id, the description with the folder's files (zip names left out), the folder and the turn limit", () => {
  const [, user] = reactMessages(
    TASK,
    { maxTurns: 15, stepSeconds: 300 },
    { options: RELEASE_DEFAULTS, datasetDir: '/workspace/public' },
  );
  assert.match(user.content, /^## Competition ID: cactus$/m);
  assert.ok(
    user.content.includes(
      'Find the cactus.\n\n## Files Provided in **/workspace/public**:\n- **/workspace/public/a/**\n- **/workspace/public/a.csv**\n- **/workspace/public/b.csv**\n- **/workspace/public/description.md**\n',
    ),
    user.content,
  );
  assert.match(user.content, /## Dataset Folder:\n\/workspace\/public\/\n/);
  assert.match(user.content, /at most 15 turns/);
  // mlepipe's user message is the description alone.
  const own = reactMessages(
    TASK,
    { maxTurns: 15, stepSeconds: 300 },
    {
      options: { ...RELEASE_DEFAULTS, userPrompt: 'mlepipe' },
      datasetDir: '/workspace/public',
    },
  );
  assert.is(own[1].content, '# Competition\n\nFind the cactus.\n');
});

test('user prompt: released templates are filled as the release fills them, the folder being public/ as the agent sees it', () => {
  const texts = {
    system: 'SYS written for this test. Day: ',
    task: '# {id}\n{task_description}\nDATA {data_root}/{id}/prepared/public/ root {data_root}\n',
    user: 'Begin.\n{specific_task_description}\nCalls: {max_llm_calls}.',
    source: '/x/custom_evaluate.py',
    sha256: '0'.repeat(64),
  };
  const options: ReleaseOptions = { ...RELEASE_DEFAULTS, texts, date: '2030-01-02' };
  const [system, user] = reactMessages(
    TASK,
    { maxTurns: 7, stepSeconds: 60 },
    { options, datasetDir: '/workspace/public' },
  );
  assert.is(system.content, 'SYS written for this test. Day: 2030-01-02');
  assert.ok(
    user.content.startsWith('Begin.\n# cactus\nFind the cactus.\n\n## Files Provided in **/workspace/public**:\n'),
  );
  assert.ok(user.content.endsWith('\nDATA /workspace/public/ root /workspace\n\nCalls: 7.'), user.content);
});

/** An episode of Score calls and an answer, with a reply that imagines a tool response; what each request was sent. */
async function scoreEpisode(options: ReleaseOptions) {
  const think = 'z'.repeat(4000);
  const call = `<think>${think}</think>\n<tool_call>\n{"name": "Score", "arguments": {"competition_id": "t"}}\n</tool_call>`;
  const replies = [
    // Text before <think>: the release's format rule fails this reply, which its pruning later removes.
    `${think}<think>a</think>\n<tool_call>\n{"name": "Score", "arguments": {"competition_id": "t"}}\n</tool_call>\n<tool_response>\nimagined\n</tool_response>`,
    call,
    call,
    call,
    '<think>done</think><answer>submission</answer>',
  ];
  const result = { score: 1, gold_threshold: 2, silver_threshold: 2, bronze_threshold: 0, median_threshold: 0 };
  const graded: Validation = { ok: true, result: { ...result, is_lower_better: false } };
  const answers: Validation[] = [
    { ok: false, problem: 'parse Error in row 3' },
    graded,
    { ok: false, problem: 'an error again' },
    graded,
  ];
  const seen: PolicyRequest[] = [];
  const policy: Policy = {
    name: 'written',
    kind: 'scripted',
    act: async (req) => {
      seen.push(req);
      return { text: replies[req.turn], usage: { prompt_tokens: 1, completion_tokens: 1 } };
    },
  };
  const task = { id: 't', description: 'd', lowerIsBetter: false, meta: { id: 't' } };
  const limits = { maxTurns: 5, stepSeconds: 1 };
  const opening = reactMessages(task, limits, { options, datasetDir: '/workspace/public' });
  let v = 0;
  const ctx = {
    task,
    session: { backend: 'bwrap', workspace: '/nonexistent' },
    policy,
    sample: 0,
    promptFormat: 'sandmle-release',
    release: options,
    limits: {
      maxTurns: 5,
      stepTimeoutMs: 1000,
      timeBudgetMs: 600_000,
      contextTokens: releaseTokens(opening) + 2700,
      observationChars: 2000,
    },
    aide: { numDrafts: 1, debugProb: 0, maxDebugDepth: 0 },
    validate: async () => answers[v++],
    signal: new AbortController().signal,
    random: () => 0,
  } as unknown as EpisodeContext;
  return { ep: await react.run(ctx), seen };
}

test('the scaffold: the cut reply is what later prompts hold, the generated one stays on its turn; pruned turns never come back', async () => {
  const { ep, seen } = await scoreEpisode(RELEASE_DEFAULTS);
  assert.equal(
    ep.turns.map((t) => t.action),
    ['validate', 'validate', 'validate', 'validate', 'answer'],
  );
  assert.ok(ep.turns[0].raw_reply?.endsWith('imagined\n</tool_response>'));
  assert.is(ep.turns[1].raw_reply, undefined);
  assert.not.match(seen[1].messages[2].content, /imagined/);
  // Over the budget after the third turn: the two turns whose Score answer says error left the conversation.
  const replies = (r: PolicyRequest) => r.messages.filter((x) => x.role === 'assistant').length;
  assert.equal(seen.map(replies), [0, 1, 2, 1, 2]);
  assert.match(seen[3].messages[3].content, /^<tool_response>\nSubmission OK/);
  assert.match(seen[4].messages[5].content, /^<tool_response>\nSubmission OK/);
  assert.is(ep.dropped_turns, 2);
  // The record keeps every reply and observation.
  assert.is(ep.messages.length, 2 + 4 * 2 + 1);
  // The release rates the conversation it ends with: the pruned replies (the first one badly formatted) do not count.
  assert.equal(
    ep.turns.map((t) => t.pruned === true),
    [true, false, true, false, false],
  );
  assert.is(releaseFormatRate(ep.messages, ep.turns), 1);
  assert.is(releaseFormatRate(ep.messages), 0.8);
  // Without the cut and with mlepipe's pruning, the conversation keeps the whole reply and every turn fits.
  const own = await scoreEpisode({ ...RELEASE_DEFAULTS, cutToolResponse: false, pruning: 'mlepipe' });
  assert.match(own.seen[1].messages[2].content, /imagined/);
  assert.is(own.ep.turns[0].raw_reply, undefined);
});

test.run();
