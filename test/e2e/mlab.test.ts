// The mlab scaffold through the built CLI: the scripted diagnose agent and a
// model served by the local OpenAI-compatible replay server (the real client)
// solve tiny generated tasks with MLAgentBench's actions and the tabular
// diagnostic tools; both submit validly and every call is in the trajectory.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startReplayServer } from '../llm/replay-server.js';
import { cli, tmpProject, tinyEvalHead, shareTaskNodes } from '../helpers.js';

// The generated tasks come from another test file that built the same key, when one did (test/shared-tasks.ts).
shareTaskNodes();

const EXP = (url: string) => `${tinyEvalHead('mlab-eval', url)}  agents:
    uses: eval
    needs: [verified]
    with: { scaffold: mlab, tools: tabular, policies: [scripted:diagnose, tiny], max_turns: 8, step_timeout: 120 }
tables:
  medals: { from: agents, rows: policy, columns: [valid_submission, turns] }
`;

const COPY =
  'import pandas as pd\npd.read_csv("public/sample_submission.csv").to_csv("submission.csv", index=False)\nprint("copied")\n';
const step = (action: string, input: unknown) =>
  `Reflection: go on.\nResearch Plan and Status: copy the sample, check the data, submit.\nFact Check: nothing yet.\nThought: next step.\nAction: ${action}\nAction Input: ${JSON.stringify(input)}`;

/** The model's turn is read from the conversation it is sent. */
const MODEL = (body: { messages: { role: string; content: string }[] }) => {
  // Edit Script (AI) asks the same model in a request of its own.
  if (body.messages[0].content.startsWith('Edit this Python script'))
    return {
      content: '```python\n' + COPY + 'print("edited")\n```',
      usage: { prompt_tokens: 50, completion_tokens: 10 },
    };
  const replies = [
    step('Write File', { file_name: 'solve.py', content: COPY }),
    step('Execute Script', { script_name: 'solve.py' }),
    step('detect_missing_values', { path: 'public/train.csv' }),
    step('Edit Script (AI)', {
      script_name: 'solve.py',
      edit_instruction: 'print "edited" at the end',
      save_name: 'solve2.py',
    }),
    'I am not sure what to do next.',
    step('Python REPL', { command: 'import pandas as pd\nprint(len(pd.read_csv("submission.csv")), "rows")' }),
    step('Final Answer', { final_answer: 'copied the sample submission' }),
  ];
  const turn = body.messages.filter((m) => m.role === 'assistant').length;
  return { content: replies[Math.min(turn, replies.length - 1)], usage: { prompt_tokens: 100, completion_tokens: 20 } };
};

/** The agents node's trajectories, read from where `mlepipe outputs` says they are. */
async function agentsTrajectories(dir: string, env: Record<string, string>) {
  const out = (await cli(['outputs', 'e.yaml', 'agents'], { cwd: dir, env })).stdout.trim();
  return (await readFile(join(out, 'trajectories.jsonl'), 'utf8'))
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
}

/** The model's turns as MODEL's replies make them: each action, and the tool or action it named. */
const MODEL_TURNS = [
  ['action', 'Write File'],
  ['code', 'Execute Script'],
  ['tool', 'detect_missing_values'],
  ['action', 'Edit Script (AI)'],
  ['invalid', null],
  ['action', 'Python REPL'],
  ['answer', 'Final Answer'],
];

test('scaffold: mlab through the CLI: valid submissions, each action and tool call recorded', async () => {
  const server = await startReplayServer([MODEL]);
  try {
    const dir = await tmpProject({ 'e.yaml': EXP(server.url) });
    const env = { TINY_KEY: 'sk-test' };
    const r = await cli(['run', 'e.yaml'], { cwd: dir, env });
    assert.is(r.exitCode, 0, r.stderr);
    assert.match(r.stdout, /scripted:diagnose\s+100 \[100, 100\]/);
    assert.match(r.stdout, /tiny\s+100 \[100, 100\]\s+7/);
    // Seven replies and one edit request on each of two tasks; the second edit request is the first's
    // word for word, so the response cache answers it.
    assert.is(server.requests.length, 15);
    assert.is(server.requests.filter((q) => q.messages[0].content.startsWith('Edit this Python script')).length, 1);
    // The system prompt lists the actions and the offered tools, and nothing of other domains.
    const system = server.requests.find((q) => q.messages[0].role === 'system')!.messages[0].content;
    assert.match(system, /- Edit Script \(AI\):/);
    assert.match(system, /- detect_missing_values \(tabular diagnostic\)/);
    assert.not.match(system, /zscore_anomaly_detector/);
    // The two rollouts of the model may run at once: find the request after the invalid reply.
    assert.ok(
      server.requests.some((q) =>
        /^Observation: invalid action: the reply has no "Action:" line/.test(q.messages[q.messages.length - 1].content),
      ),
    );

    const trajectories = await agentsTrajectories(dir, env);
    assert.is(trajectories.length, 4);
    for (const t of trajectories) {
      assert.is(t.scaffold, 'mlab');
      assert.is(t.ended, 'answer');
      assert.ok(t.evaluation, `${t.policy} on ${t.task_id}: ${t.grade_error}`);
    }
    const model = trajectories.find((t) => t.policy === 'tiny');
    assert.equal(
      model.turns.map((t: { action: string; name?: string }) => [t.action, t.name ?? null]),
      MODEL_TURNS,
    );
    // MLAgentBench's answer to an edit: where it went and the diff.
    assert.match(
      model.turns[3].observation,
      /^The edited file is saved to solve2\.py\. Here is the diff, please check if the edit is correct and desirable:\n\n--- solve2\.py\n\+\+\+ solve2\.py\n@@ -1,3 \+1,4 @@\n(?: .*\n){3}\+print\("edited"\)\n$/,
    );
    // The REPL runs in the jail, in the workspace, and shows what the command printed.
    assert.is(model.turns[5].exit_code, 0);
    assert.match(model.turns[5].observation, /--- stdout ---\n\d+ rows/);
    assert.is(model.usage.requests, 8);
    assert.equal(model.turns[0].args, { file_name: 'solve.py', content: COPY });
    assert.is(model.turns[1].exit_code, 0);
    assert.is(model.turns[1].code, COPY);
    assert.match(
      model.turns[1].observation,
      /^The script has been executed\. Here is the output:\nexit code 0 .*\n--- stdout ---\ncopied/,
    );
    assert.equal(model.turns[2].args, { path: 'public/train.csv' });
    assert.not.match(model.turns[2].observation, /^error/);
    assert.match(model.turns[2].observation, /missing/i);

    const scripted = trajectories.find((t) => t.policy === 'scripted:diagnose');
    const names = scripted.turns.map((t: { name: string }) => t.name);
    assert.equal(names, [
      'List Files',
      'identify_feature_types',
      'detect_missing_values',
      'Write File',
      'Execute Script',
      'Final Answer',
    ]);
    assert.match(scripted.turns[0].observation, /train\.csv/);
    for (const t of scripted.turns.filter((x: { action: string }) => x.action === 'tool'))
      assert.not.match(t.observation, /^error/);
    assert.is(scripted.turns[4].exit_code, 0, scripted.turns[4].observation);
  } finally {
    await server.close();
  }
});

test.run();
