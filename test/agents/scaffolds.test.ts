// Scaffolds and policies on a real generated task in the bwrap sandbox:
// the scripted agents through ReAct and AIDE, and a hand-written policy
// that exercises format errors, timeouts, the validate tool, the turn limit
// and the time budget.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { scriptedPolicy } from '../../agents/policies/scripted.js';
import type { Policy, PolicyRequest } from '../../agents/policies/types.js';
import { aide } from '../../agents/scaffolds/aide/index.js';
import { react } from '../../agents/scaffolds/react/index.js';
import type { Scaffold } from '../../agents/scaffolds/types.js';
import { createSandbox } from '../../sandbox/index.js';
import { selectSeeds } from '../../seeds/index.js';
import { draftSpec } from '../../seeds/strategist.js';
import { rollout } from '../../stages/shared/episode.js';
import { buildTask } from '../../tasks/factory.js';

const PY = '/usr/bin/python3';
let root = '';
let task = '';
const sandbox = createSandbox({ backend: 'bwrap', warm: true, poolSize: 2 });

test.before(async () => {
  root = await mkdtemp(join(tmpdir(), 'mlepipe-scaffolds-'));
  await mkdir(join(root, 'empty', 'public'), { recursive: true });
  const dna = selectSeeds('mlebench-tabular')[0];
  const spec = draftSpec(dna, { seed: 3, index: 0 });
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
const AIDE = { numDrafts: 2, debugProb: 0.5, maxDebugDepth: 2 };

function go(scaffold: Scaffold, policy: Policy, limits = LIMITS, aideOpts = AIDE) {
  return rollout({
    sandbox,
    scaffold,
    policy,
    task: { id: 'task', dir: task },
    sample: 0,
    groupId: 'g',
    limits,
    memoryMb: 2048,
    aide: aideOpts,
    python: PY,
    seed: 0,
    reward: '0.1*format + 0.3*execute + 0.1*median + 0.2*bronze + 0.2*silver + 0.1*gold',
    signal: new AbortController().signal,
  });
}

/** A policy that replies with the given texts in order (the last one repeats). */
function replies(...texts: Array<string | ((r: PolicyRequest) => string)>): Policy & { seen: PolicyRequest[] } {
  const seen: PolicyRequest[] = [];
  return {
    name: 'written',
    kind: 'scripted',
    seen,
    async act(req) {
      seen.push(req);
      const t = texts[Math.min(req.turn, texts.length - 1)];
      return { text: typeof t === 'function' ? t(req) : t, usage: { prompt_tokens: 1, completion_tokens: 1 } };
    },
  };
}

test('scripted forest through ReAct: inspect, two solving rungs, validate, answer; graded and rewarded', async () => {
  const t = await go(react, scriptedPolicy('forest'));
  assert.equal(
    t.turns.map((x) => x.action),
    ['code', 'code', 'code', 'validate', 'answer'],
  );
  assert.is(t.ended, 'answer');
  assert.ok(
    t.turns.slice(0, 3).every((x) => x.exit_code === 0),
    JSON.stringify(t.turns.map((x) => x.observation)),
  );
  assert.match(t.turns[3].observation, /^valid:/);
  assert.ok(t.evaluation && Number.isFinite(t.evaluation.score));
  assert.is(t.variables.format, 1);
  assert.is(t.variables.execute, 1);
  assert.ok(t.reward !== null && t.reward >= 0.4);
  // The second rung imports the kit the first one saved.
  assert.match(t.turns[2].code!, /from mlekit import solve/);
  assert.match(t.turns[2].observation, /validation score \(\w+\)/);
  // Messages: system, task, then a reply and an observation per turn (none after the answer).
  assert.is(t.messages.length, 2 + 2 * 4 + 1);
});

test('format errors, a timed-out step, a failed validation; out of turns, the last submission is graded', async () => {
  const p = replies(
    'I will just talk.',
    '<think>spin</think>\n```python\nwhile True:\n    pass\n```',
    '<think>write a bad file</think>\n```python\nopen("submission.csv", "w").write("id,wrong\\n1,2\\n")\n```',
    '<think>check</think><validate>submission.csv</validate>',
    '<think>fix it</think>\n```python\nimport pandas as pd\npd.read_csv("public/sample_submission.csv").to_csv("submission.csv", index=False)\n```',
  );
  const t = await go(react, p, { ...LIMITS, maxTurns: 5, stepTimeoutMs: 2000 });
  assert.is(t.ended, 'max_turns');
  assert.equal(
    t.turns.map((x) => x.action),
    ['invalid', 'code', 'code', 'validate', 'code'],
  );
  assert.match(t.turns[0].observation, /^format error: the reply holds no action/);
  assert.ok(t.turns[1].timed_out);
  assert.match(t.turns[1].observation, /timed out after 2 s/);
  assert.match(t.turns[3].observation, /^invalid submission:/);
  assert.is(t.variables.format, 0.8);
  // The sample submission is valid and scored, though it earns no medal.
  assert.ok(t.evaluation);
  assert.is(t.variables.execute, 1);
  // The policy saw each observation as the last user message.
  assert.match(p.seen[2].messages[p.seen[2].messages.length - 1].content, /timed out/);
});

test('the episode time budget cuts a long step short and ends the episode', async () => {
  const p = replies('<think>spin</think>\n```python\nimport time\ntime.sleep(60)\n```');
  const t = await go(react, p, { ...LIMITS, timeBudgetMs: 3000, stepTimeoutMs: 60_000 });
  // The step got what was left of the budget, not its own 60 s, and was killed there.
  assert.is(t.turns.length, 1);
  assert.is(t.turns[0].timed_out, true);
  assert.match(t.turns[0].observation, /^timed out after [0-3] s/);
  assert.is(t.ended, 'time_budget');
  assert.is(t.variables.timed_out, 1);
  assert.is(t.evaluation, null);
  assert.is(t.variables.execute, 0);
});

test('scripted boosted through AIDE: drafts, then improvements of the best node; the best node is graded', async () => {
  const t = await go(aide, scriptedPolicy('boosted'), { ...LIMITS, maxTurns: 4 });
  const journal = t.journal as {
    nodes: Array<{ operator: string; parent: number | null; metric: number | null; buggy: boolean }>;
    best: number;
  };
  assert.equal(
    journal.nodes.map((n) => n.operator),
    ['draft', 'draft', 'improve', 'improve'],
  );
  assert.ok(journal.nodes.every((n) => !n.buggy && n.metric !== null));
  assert.is(journal.nodes[2].parent !== null, true);
  assert.is(t.submission, `.aide/node_${journal.best}.csv`);
  assert.ok(t.evaluation);
  const lower = t.evaluation!.is_lower_better;
  const metrics = journal.nodes.map((n) => n.metric!);
  assert.is(journal.nodes[journal.best].metric, lower ? Math.min(...metrics) : Math.max(...metrics));
});

test('AIDE debugs a failed leaf (debug_prob 1) and grades the fixed node', async () => {
  const p = replies((r) =>
    r.purpose === 'review'
      ? JSON.stringify({ is_bug: r.executed!.exit_code !== 0, summary: '', metric: 0.1, lower_is_better: false })
      : r.purpose === 'debug'
        ? 'Fix: write the sample.\n```python\nimport pandas as pd\npd.read_csv("public/sample_submission.csv").to_csv("submission.csv", index=False)\nprint("validation score: 0.1")\n```'
        : 'Draft.\n```python\nraise SystemExit(3)\n```',
  );
  const t = await go(aide, p, { ...LIMITS, maxTurns: 3 }, { ...AIDE, debugProb: 1 });
  const journal = t.journal as { nodes: Array<{ operator: string; buggy: boolean; exit_code: number | null }> };
  assert.equal(
    journal.nodes.map((n) => n.operator),
    ['draft', 'draft', 'debug'],
  );
  assert.equal(
    journal.nodes.map((n) => n.buggy),
    [true, true, false],
  );
  assert.is(t.submission, '.aide/node_2.csv');
  assert.ok(t.evaluation);
});

test('AIDE prompts show a preview of the data and the packages installed in the jail', async () => {
  const p = replies(
    'Draft: the sample.\n```python\nimport pandas as pd\npd.read_csv("public/sample_submission.csv").to_csv("submission.csv", index=False)\nprint("validation score: 0.5")\n```',
  );
  await go(aide, p, { ...LIMITS, maxTurns: 1 }, { ...AIDE, numDrafts: 1 });
  const draft = p.seen.find((r) => r.purpose === 'draft')!;
  const prompt = draft.messages.map((m) => m.content).join('\n');
  // The preview reads the task's own table (its row count and columns), and the jail's pandas is listed.
  assert.match(prompt, /# Data overview[\s\S]*-> train\.csv: \d+ rows, \d+ columns\./);
  assert.match(prompt, /Installed in the Python that runs the script: [^\n]*`pandas`/);
  assert.match(prompt, /Steps left in the search, this one included: 1\./);
  assert.match(prompt, /Evaluate with 5-fold cross-validation/);
});

test('AIDE: a script that prints its score in its own words gets no metric from the review and is buggy', async () => {
  const sample =
    'import pandas as pd\npd.read_csv("public/sample_submission.csv").to_csv("submission.csv", index=False)';
  const p = replies((r) =>
    r.purpose === 'review'
      ? JSON.stringify({ is_bug: false, summary: 'prints Val RMSE', metric: null, lower_is_better: true })
      : `Draft.\n\`\`\`python\n${sample}\nprint("Val RMSE: 0.41")\n\`\`\``,
  );
  const t = await go(aide, p, { ...LIMITS, maxTurns: 2 }, { ...AIDE, numDrafts: 2 });
  const journal = t.journal as { nodes: Array<{ buggy: boolean; metric: number | null }>; best: number | null };
  assert.equal(
    journal.nodes.map((n) => [n.buggy, n.metric]),
    [
      [true, null],
      [true, null],
    ],
  );
  assert.is(journal.best, null);
  assert.is(t.submission, null);
  assert.is(p.seen.filter((r) => r.purpose === 'review').length, 2);
});

test.run();
