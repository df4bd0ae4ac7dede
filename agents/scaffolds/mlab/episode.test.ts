// The mlab scaffold's episodes without a jail: what the trajectory records turn by turn, arguments checked
// before anything runs, the tools a rollout is offered, and the AI actions' model. The actions themselves are in
// ./mlab.test.ts.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { listTools } from '../../../tools/index.js';
import type { Policy, PolicyRequest } from '../../policies/types.js';
import type { EpisodeContext } from '../types.js';
import type { ActionEnv } from './actions.js';
import { MLAB_DEFAULTS, mlabScaffold } from './index.js';
import { chooseTools, dropTools } from './tools.js';

const reply = (action: string, input: string) =>
  `Reflection: r\nResearch Plan and Status: p\nFact Check: f\nThought: t\nAction: ${action}\nAction Input: ${input}`;

let root = '';
let session: ActionEnv['session'];
let publicDir = '';

test.before.each(async () => {
  root = await mkdtemp(join(tmpdir(), 'mlepipe-mlab-'));
  await mkdir(join(root, 'ws', 'public'), { recursive: true });
  await mkdir(join(root, 'pub'), { recursive: true });
  await writeFile(join(root, 'pub', 'train.csv'), 'a,b\n1,2\n');
  session = { workspace: join(root, 'ws') } as ActionEnv['session'];
  publicDir = join(root, 'pub');
});

test.after.each(async () => {
  await rm(root, { recursive: true, force: true });
});

/** An episode with written replies and no jail (no script or tool runs). */
async function episode(
  texts: string[],
  opts: Parameters<typeof mlabScaffold>[0],
  meta: Record<string, unknown> = { id: 't' },
) {
  const seen: PolicyRequest[] = [];
  const policy: Policy = {
    name: 'written',
    kind: 'scripted',
    act: async (req) => {
      seen.push(req);
      const text =
        req.purpose === 'understand' ? 'It has columns a and b.' : texts[Math.min(req.turn, texts.length - 1)];
      return { text, usage: { prompt_tokens: 1, completion_tokens: 1 } };
    },
  };
  const ctx = {
    task: { id: 't', description: 'Predict b.', lowerIsBetter: false, meta },
    session: session,
    publicDir: publicDir,
    policy,
    sample: 0,
    limits: { maxTurns: 10, stepTimeoutMs: 1000, timeBudgetMs: 600_000, contextTokens: 32_768, observationChars: 2000 },
    aide: { numDrafts: 1, debugProb: 0, maxDebugDepth: 0 },
    validate: async () => ({ ok: true as const }),
    signal: new AbortController().signal,
    random: () => 0,
  } as unknown as EpisodeContext;
  return { ep: await mlabScaffold(opts).run(ctx), seen };
}

test('every call is a turn with its action, arguments and observation; Final Answer ends the episode', async () => {
  const { ep, seen } = await episode(
    [
      reply('List Files', '{"dir_path": "public"}'),
      'no action here',
      reply('Write File', '{"file_name": "../x.py", "content": "1"}'),
      reply('Understand File', '{"file_name": "public/train.csv", "things_to_look_for": "the columns"}'),
      reply('Final Answer', '{"final_answer": "done", "submission": "sub.csv"}'),
      reply('List Files', '{}'),
    ],
    { tools: 'tabular', toolDropout: 0, seed: 0 },
  );
  assert.equal(
    ep.turns.map((t) => [t.action, t.name ?? null]),
    [
      ['action', 'List Files'],
      ['invalid', null],
      ['action', 'Write File'],
      ['action', 'Understand File'],
      ['answer', 'Final Answer'],
    ],
  );
  assert.equal(ep.turns[0].args, { dir_path: 'public' });
  assert.is(ep.turns[0].observation, 'train.csv');
  assert.match(ep.turns[1].observation, /^invalid action: the reply has no "Action:" line/);
  assert.match(ep.turns[2].observation, /^error: \.\.\/x\.py: outside the workspace/);
  assert.is(ep.turns[3].observation, 'It has columns a and b.');
  assert.is(ep.submission, 'sub.csv');
  assert.is(ep.ended, 'answer');
  // The understand request went to the policy's model with the file's text.
  const u = seen.find((r) => r.purpose === 'understand');
  assert.is(u?.file?.content, 'a,b\n1,2\n');
  // The offered actions: MLAgentBench's and the tabular tools, no others; the observation went back to the model.
  const offered = seen[0].actions ?? [];
  assert.ok(
    offered.includes('Edit Script (AI)') && offered.includes('detect_label_imbalance') && !offered.includes('acf'),
  );
  assert.match(seen[0].messages[0].content, /detect_label_imbalance \(tabular diagnostic\)/);
  assert.is(seen[1].messages[seen[1].messages.length - 1].content, 'Observation: train.csv');
  assert.is(ep.usage.requests, 6);
});

test('a tool call with bad arguments is an error observation, checked before anything runs', async () => {
  const { ep } = await episode(
    [reply('detect_missing_values', '{"colum": "a"}'), reply('Final Answer', '{"final_answer": "x"}')],
    { tools: 'tabular', toolDropout: 0, seed: 0 },
  );
  assert.is(ep.turns[0].action, 'tool');
  assert.equal(ep.turns[0].args, { colum: 'a' });
  assert.match(ep.turns[0].observation, /^error: .*path/);
});

test('tool_dropout: the rollout is offered the seeded share of the tools, fixed for all its turns', async () => {
  const all = chooseTools('all');
  const { seen } = await episode([reply('List Files', '{}'), reply('Final Answer', '{"final_answer": "x"}')], {
    tools: 'all',
    toolDropout: 0.2,
    seed: 7,
  });
  const expected = dropTools(all, 0.2, 7, 't', 'written', 0).map((t) => t.name);
  assert.is(expected.length, all.length - Math.round(0.2 * all.length));
  assert.equal(seen[0].actions!.slice(17), expected);
  assert.equal(seen[1].actions, seen[0].actions);
});

test("tools: domain (the default) offers the shared module and the task domain's, not all 67", async () => {
  const mods = (domain?: string) => [...new Set(chooseTools('domain', domain).map((t) => t.domain))].sort();
  assert.equal(mods('graph'), ['graph', 'shared']);
  assert.equal(mods('cv'), ['shared', 'vision']);
  assert.equal(mods('time_series'), ['shared', 'tabular', 'time-series']);
  // A task of no known domain (a procedural SandMLE task says only its modality, when that) gets every tool.
  assert.is(chooseTools('domain', 'audio').length, listTools().length);
  assert.is(chooseTools('domain').length, listTools().length);
  assert.is(MLAB_DEFAULTS.tools, 'domain');
  const { seen } = await episode(
    [reply('List Files', '{}'), reply('Final Answer', '{"final_answer": "x"}')],
    MLAB_DEFAULTS,
    { id: 't', domain: 'graph' },
  );
  const offered = seen[0].actions ?? [];
  assert.ok(offered.includes('homophily_estimator') && offered.includes('validate_output_format'));
  assert.ok(!offered.includes('detect_missing_values') && !offered.includes('acf'));
  const prompt = seen[0].messages[0].content;
  assert.match(prompt, /homophily_estimator \(graph diagnostic\)/);
  assert.not.match(prompt, /\(tabular diagnostic\)|\(nlp diagnostic\)/);
  assert.ok(prompt.length < 12_000, `the graph prompt is ${prompt.length} characters`);
});

test('the AI actions ask action_model when one is set; without one a scripted policy is told plainly that none is', async () => {
  const steps = [
    reply('Append Summary to Research Log', '{"content": "tried C=1"}'),
    reply('Reflection', '{"things_to_reflect_on": "what next"}'),
    reply('Final Answer', '{"final_answer": "x"}'),
  ];
  const plain = await episode(steps, { tools: 'none', toolDropout: 0, seed: 0 });
  assert.is(
    plain.ep.turns[1].observation,
    'error: this action asks a model, and none is set: the policy written is not a model and the stage names no action_model (a models: entry)',
  );
  const heard: PolicyRequest[] = [];
  const actionModel: Policy = {
    name: 'editor',
    kind: 'openai',
    act: async (req) => (
      heard.push(req),
      { text: 'Try a smaller C.', usage: { prompt_tokens: 3, completion_tokens: 4 } }
    ),
  };
  const { ep, seen } = await episode(steps, { tools: 'none', toolDropout: 0, seed: 0, actionModel });
  assert.is(ep.turns[1].observation, 'Reflection: Try a smaller C.');
  assert.equal(
    heard.map((r) => r.purpose),
    ['reflect'],
  );
  assert.match(heard[0].messages[0].content, /tried C=1/);
  // The policy itself was asked for its steps only.
  assert.ok(seen.every((r) => r.purpose === 'step'));
});

test('tools: none offers only MLAgentBench actions', async () => {
  const { seen } = await episode(
    [reply('detect_missing_values', '{"path": "public/train.csv"}'), reply('Final Answer', '{"final_answer": "x"}')],
    { tools: 'none', toolDropout: 0, seed: 0 },
  );
  assert.is(seen[0].actions?.length, 17);
  assert.not.match(seen[0].messages[0].content, /Diagnostic tools/);
});

test.run();
