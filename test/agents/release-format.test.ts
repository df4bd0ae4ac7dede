// ReAct in the released SandMLE format on a real generated task in the bwrap
// sandbox: a scripted agent's tool calls run, the Score tool answers inside
// <tool_response>, and the episode is graded and rewarded as in mlepipe's
// own format.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { scriptedPolicy } from '../../agents/policies/scripted.js';
import type { Policy, PolicyRequest } from '../../agents/policies/types.js';
import { react } from '../../agents/scaffolds/react/index.js';
import type { PromptFormat } from '../../agents/scaffolds/types.js';
import { createSandbox } from '../../sandbox/index.js';
import { selectSeeds } from '../../seeds/index.js';
import { draftSpec } from '../../seeds/strategist.js';
import { rollout } from '../../stages/shared/episode.js';
import { buildTask } from '../../tasks/factory.js';

const PY = '/usr/bin/python3';
let root = '';
let task = '';
const sandbox = createSandbox({ backend: 'bwrap', warm: true, poolSize: 1 });

test.before(async () => {
  root = await mkdtemp(join(tmpdir(), 'mlepipe-release-format-'));
  await mkdir(join(root, 'empty', 'public'), { recursive: true });
  const spec = draftSpec(selectSeeds('mlebench-tabular')[0], { seed: 3, index: 0 });
  const s = await sandbox.open({ task: join(root, 'empty') });
  const r = await buildTask(spec, join(root, 'task'), { session: s, python: PY });
  await s.close();
  assert.ok(r.ok, JSON.stringify(r));
  task = join(root, 'task');
});

test.after(async () => {
  await sandbox.shutdown();
  await rm(root, { recursive: true, force: true });
});

const LIMITS = {
  maxTurns: 8,
  stepTimeoutMs: 60_000,
  timeBudgetMs: 600_000,
  contextTokens: 32_768,
  observationChars: 2000,
};
const REWARD = '0.1*format + 0.3*execute + 0.1*median + 0.2*bronze + 0.2*silver + 0.1*gold';

function go(policy: Policy, promptFormat?: PromptFormat, feedback: 'none' | 'score' = 'none') {
  return rollout({
    sandbox,
    scaffold: react,
    policy,
    task: { id: 'task', dir: task },
    sample: 0,
    groupId: 'g',
    limits: LIMITS,
    memoryMb: 2048,
    aide: { numDrafts: 1, debugProb: 0, maxDebugDepth: 0 },
    python: PY,
    seed: 0,
    reward: REWARD,
    feedback,
    promptFormat,
    signal: new AbortController().signal,
  });
}

test("scripted forest in the release format: tool calls run, Score answers in <tool_response>, graded as in mlepipe's format", async () => {
  const release = await go(scriptedPolicy('forest'), 'sandmle-release', 'score');
  assert.equal(
    release.turns.map((x) => x.action),
    ['code', 'code', 'code', 'validate', 'answer'],
  );
  assert.is(release.ended, 'answer');
  assert.ok(release.turns.every((x) => x.format_ok));
  assert.ok(
    release.turns.slice(0, 3).every((x) => x.exit_code === 0),
    JSON.stringify(release.turns.map((x) => x.observation)),
  );
  // The prompt describes the release's tools; replies are tool calls; observations come back wrapped.
  assert.match(release.messages[0].content, /<tool_call>\npython\n<code>/);
  assert.match(release.messages[0].content, /"name": "Score", "arguments": \{"competition_id": "task"\}/);
  const replies = release.messages.filter((m) => m.role === 'assistant').map((m) => m.content);
  assert.match(
    replies[1],
    /^<think>[^<]*<\/think>\n<tool_call>\npython\n<code>\n[\s\S]*solve\("linear"[\s\S]*<\/code>\n<\/tool_call>$/,
  );
  assert.is(
    replies[3],
    '<think>Check the submission format before finishing.</think>\n<tool_call>\n{"name":"Score","arguments":{"competition_id":"task"}}\n</tool_call>',
  );
  assert.is(replies[4], '<think>The submission is in place.</think>\n<answer>submission</answer>');
  const observations = release.messages
    .slice(2)
    .filter((m) => m.role === 'user')
    .map((m) => m.content);
  assert.is(observations.length, 4);
  for (const o of observations) assert.match(o, /^<tool_response>\n[\s\S]*\n<\/tool_response>$/);
  // The release's user message names the competition and lists the dataset folder as the jail shows it.
  assert.match(release.messages[1].content, /^## Competition ID: task$/m);
  assert.match(release.messages[1].content, /^- \*\*\/workspace\/public\/description\.md\*\*$/m);
  assert.match(release.messages[1].content, /^## Dataset Folder:\n\/workspace\/public\/$/m);
  // Executions answer in the release's layout: output tails and whether submission.csv is there, no exit code.
  for (const o of observations.slice(0, 3)) {
    assert.match(o, /^<tool_response>\n(\[Output\]\n|No stdout)/);
    assert.not.match(o, /exit code/);
  }
  assert.match(observations[2], /submission\.csv found at \/workspace\/submission\.csv\./);
  // The Score tool answers in the release's words, whatever feedback: says.
  assert.match(
    observations[3],
    /^<tool_response>\nSubmission OK\. (But you do not reach the bronze threshold[^\n]* )?Details: \{"score_primary \(main competition metric for current code\)": [\d.]+, /,
  );
  assert.is(release.variables.format, 1);
  assert.is(release.variables.execute, 1);

  // The same agent in mlepipe's format reaches the same submission and grade.
  const own = await go(scriptedPolicy('forest'));
  assert.equal(
    own.turns.map((x) => x.action),
    release.turns.map((x) => x.action),
  );
  assert.ok(release.evaluation && own.evaluation);
  assert.is(release.evaluation!.score, own.evaluation!.score);
  assert.is(release.reward, own.reward);
  assert.not.match(own.messages[0].content, /<tool_call>/);
});

test("a reply in mlepipe's format is a format error under the release format, and the error says how to call a tool", async () => {
  const seen: PolicyRequest[] = [];
  const policy: Policy = {
    name: 'written',
    kind: 'scripted',
    async act(req) {
      seen.push(req);
      const texts = [
        '<think>run</think>\n```python\nprint(1)\n```',
        '<think>done</think>\n<answer>submission</answer>',
      ];
      return { text: texts[Math.min(req.turn, 1)], usage: { prompt_tokens: 1, completion_tokens: 1 } };
    },
  };
  const t = await go(policy, 'sandmle-release');
  assert.equal(
    t.turns.map((x) => x.action),
    ['invalid', 'answer'],
  );
  assert.match(t.turns[0].observation, /^format error: the reply holds no action: end it with one <tool_call>/);
  assert.is(seen[0].promptFormat, 'sandmle-release');
  assert.is(t.variables.format, 0.5);
});

test.run();
