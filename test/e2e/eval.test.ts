// End to end through the built CLI: a tiny eval of a scripted agent and of
// the `openai` policy served by the local OpenAI-compatible replay server,
// the medal table after the run, report --json, the cache on rerun, and an
// endpoint that cannot be reached.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startReplayServer } from '../llm/replay-server.js';
import { cli, closedPort, nodeLogs, tmpProject, tinyEvalHead } from '../helpers.js';

const EXP = (url: string) => `${tinyEvalHead('tiny-eval', url)}  agents:
    uses: eval
    needs: [verified]
    with: { policies: [scripted:linear, tiny], max_turns: 4, step_timeout: 60, temperature: 0.7, seed: 5 }
tables:
  medals: { from: agents, rows: policy, columns: [valid_submission, any_medal, turns] }
`;

/** A model that copies the sample submission, validates it and answers: its turn is read from the conversation. */
const MODEL = (body: { messages: { role: string }[] }) => {
  const turn = body.messages.filter((m) => m.role === 'assistant').length;
  const replies = [
    '<think>The sample submission has the right shape.</think>\n```python\nimport pandas as pd\npd.read_csv("public/sample_submission.csv").to_csv("submission.csv", index=False)\nprint("copied")\n```',
    '<think>Check it.</think>\n<validate>submission.csv</validate>',
    '<think>Done.</think>\n<answer>submission.csv</answer>',
  ];
  return { content: replies[Math.min(turn, 2)], usage: { prompt_tokens: 100, completion_tokens: 20 } };
};

test('scripted and openai policies through the CLI: medal table, report --json, trajectories, cached rerun', async () => {
  const server = await startReplayServer([MODEL]);
  try {
    const dir = await tmpProject({ 'e.yaml': EXP(server.url) });
    const env = { TINY_KEY: 'sk-test' };
    const r = await cli(['run', 'e.yaml'], { cwd: dir, env });
    assert.is(r.exitCode, 0, r.stderr);
    assert.match(r.stdout, /medals\npolicy\s+valid_submission\s+any_medal\s+turns/);
    assert.match(r.stdout, /scripted:linear\s+100 \[100, 100\]/);
    assert.match(r.stdout, /tiny\s+100 \[100, 100\]\s+0 \[0, 0\]\s+3/);
    // Two tasks, three turns each; each request carries the conversation so far.
    assert.is(server.requests.length, 6);
    assert.equal(
      server.requests.map((q) => q.model),
      Array(6).fill('tiny-coder'),
    );
    // The agents' jails are the task generator's, handed on within the run (sandbox/warm/shelf.ts).
    assert.match(
      await nodeLogs(dir),
      /sandbox: 0 warm jails started and 2 taken over from an earlier stage for 4 rollouts/,
    );
    assert.is(server.requests[0].temperature, 0.7);
    assert.match(server.requests[0].messages[0].content, '<think>');
    assert.match(server.requests[1].messages.at(-1)!.content, /^exit code 0 · [\d.]+ s\n--- stdout ---\ncopied/);
    assert.match(server.requests[2].messages.at(-1)!.content, /^valid: submission.csv has the submission's format/);

    const report = JSON.parse((await cli(['report', 'e.yaml', '--json'], { cwd: dir, env })).stdout);
    const rows = report.tables.medals.rows as Array<Record<string, unknown>>;
    assert.equal(
      rows.map((x) => x.policy),
      ['scripted:linear', 'tiny'],
    );
    assert.equal(Object.keys(rows[0]).sort(), [
      'any_medal',
      'any_medal_hi',
      'any_medal_lo',
      'any_medal_sem',
      'policy',
      'turns',
      'valid_submission',
      'valid_submission_hi',
      'valid_submission_lo',
      'valid_submission_sem',
    ]);

    const out = (await cli(['outputs', 'e.yaml', 'agents'], { cwd: dir, env })).stdout.trim();
    const trajectories = (await readFile(join(out, 'trajectories.jsonl'), 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    assert.is(trajectories.length, 4);
    const model = trajectories.filter((t) => t.policy === 'tiny');
    assert.equal(
      model[0].turns.map((t: { action: string }) => t.action),
      ['code', 'validate', 'answer'],
    );
    assert.is(model[0].usage.prompt_tokens, 300);
    assert.is(model[0].variables.format, 1);
    assert.ok(model[0].evaluation.score !== undefined);
    const grading = JSON.parse(await readFile(join(out, 'grading_report.json'), 'utf8'));
    assert.equal([grading.tiny.total_runs, grading.tiny.total_valid_submissions], [2, 2]);
    const lock = JSON.parse(await readFile(join(dir, 'e.lock.json'), 'utf8'));
    assert.equal([lock.nodes.agents.metrics.llm_requests, lock.nodes.agents.metrics.prompt_tokens], [6, 600]);

    // Rerun: every node is cached, no request is made.
    const again = await cli(['run', 'e.yaml'], { cwd: dir, env });
    assert.is(again.exitCode, 0, again.stderr);
    assert.match(again.stderr, /0 ran, 3 cached/);
    assert.is(server.requests.length, 6);
  } finally {
    await server.close();
  }
});

test('an unreachable endpoint: run refuses to start, naming it; with --no-preflight the eval node stops with an environment error naming it', async () => {
  const port = await closedPort();
  // No retries: the first refused connection is the answer (the backoff is the client's own test).
  const dir = await tmpProject({
    'e.yaml': EXP(`http://127.0.0.1:${port}/v1`)
      .replace('scripted:linear, tiny', 'tiny')
      .replace('timeout_s: 10 }', 'timeout_s: 10, retries: 0 }'),
  });
  // The preflight finds it first: nothing starts, and the endpoint is named where it is written.
  const refused = await cli(['run', 'e.yaml'], { cwd: dir, env: { TINY_KEY: 'sk-test' } });
  assert.is(refused.exitCode, 3, refused.stderr);
  assert.match(
    refused.stderr,
    `missing: endpoint that answers http://127.0.0.1:${port}/v1 (models.tiny.base_url, e.yaml:`,
  );
  assert.not.match(refused.stderr, '▶');
  // Started anyway (an endpoint that goes away during a run looks the same to the node).
  const r = await cli(['run', 'e.yaml', '--no-preflight'], { cwd: dir, env: { TINY_KEY: 'sk-test' } });
  assert.is(r.exitCode, 1, r.stderr);
  assert.match(r.stderr, `cannot reach`);
  assert.match(r.stderr, `127.0.0.1:${port}`);
});

test('a policy that names nothing is an error at its position', async () => {
  const dir = await tmpProject({
    'e.yaml': EXP('http://127.0.0.1:1/v1').replace('scripted:linear, tiny', 'scripted:linaer, tiny'),
  });
  const r = await cli(['validate', 'e.yaml'], { cwd: dir });
  assert.is(r.exitCode, 2);
  assert.match(r.stderr, /e\.yaml:10:\d+: stages\.agents\.with\.policies\[0\]: unknown scripted agent "linaer"/);
});

test.run();
