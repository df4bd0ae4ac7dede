// Solution summaries written by a model, through the built CLI: a local
// OpenAI-compatible server writes each verified demonstration's summary (and
// scores the calls from echoed log-probabilities). The bank holds the model's
// text and who wrote it; the request holds the trajectory's actions and task
// description, not its score or observations; an empty answer leaves the
// procedural summary with the reason; a rerun asks for nothing again, from
// the node's items even without the response cache.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { summarise } from '../../agents/shaping/bank.js';
import type { Trajectory } from '../../agents/trajectory.js';
import { cli, outputsOf, readJsonl, tmpProject, shareTaskNodes } from '../helpers.js';
import { echoReply } from '../llm/echo.js';
import { startReplayServer, type ReplayServer } from '../llm/replay-server.js';

// The generated tasks come from another test file that built the same key, when one did (test/shared-tasks.ts).
shareTaskNodes();

const taskOf = (prompt: string) => /^Task (\S+)\.$/m.exec(prompt)?.[1] ?? '?';

/** Tasks, their demonstrations, and a SPICE run whose references the model at `url` summarises. */
const summariesExperiment = (url: string) => `name: summaries
models:
  writer: { provider: openai, base_url: "${url}", model: writer-7b, timeout_s: 30 }
stages:
  tasks: { uses: generate, with: { seeds: mlebench-tabular, count: 2, samples: [50, 80], seed: 4 } }
  verified: { uses: filter, needs: [tasks], with: { val: 0 } }
  demos: { uses: eval, needs: [verified], with: { policy: scripted:boosted, max_turns: 6 } }
  rl: { uses: grpo, needs: [verified, demos], with: { split: all, reward: mltoolbench, steps: 1, batch_size: 1, group_size: 2, max_turns: 3, seed: 0, shaping: { kind: spice, scorer: writer, summarizer: writer, beta: 0.5, references: 1 } } }
`;

/** An entry of the grpo node's bank.json. */
type BankEntry = { task_id: string; source: string; text: string; writer: string; fallback?: string };

test('demonstrations summarised by the model: its text and name in bank.json, actions in the request, no score; no request on a rerun', async () => {
  let empty = '';
  const echo = echoReply();
  const server = await startReplayServer([
    (body: ReplayServer['requests'][number]) => {
      if (body.prompt !== undefined) return echo(body);
      const task = taskOf(body.messages[0].content);
      // The first task asked about gets an empty answer (a reasoning model that only thought).
      empty ||= task;
      return {
        content:
          task === empty
            ? '<think>hmm</think>\n'
            : `<think>plan</think>\nSUMMARY of ${task}: the agent inspected the columns and fit a boosted model.`,
      };
    },
  ]);
  try {
    const dir = await tmpProject({ 'e.yaml': summariesExperiment(server.url) });
    const r = await cli(['run', 'e.yaml'], { cwd: dir });
    assert.is(r.exitCode, 0, r.stderr);
    const demos = (await readJsonl(join(await outputsOf(dir, 'demos'), 'trajectories.jsonl'))) as Trajectory[];
    const verified = demos.filter((t) => t.variables.success === 1);
    assert.ok(verified.length >= 2, `${verified.length} verified demonstrations`);
    const bank = JSON.parse(await readFile(join(await outputsOf(dir, 'rl'), 'bank.json'), 'utf8')) as BankEntry[];
    const shown = bank.filter((e) => e.source === 'demonstration');
    assert.is(shown.length, verified.length);
    for (const e of shown) {
      if (e.task_id === empty) {
        // The empty answer: the summary from the record stands in, and says why.
        assert.equal([e.writer, e.fallback], ['procedural', 'writer: empty answer']);
        assert.ok(verified.some((t) => summarise(t) === e.text));
      } else {
        assert.equal(
          [e.writer, e.text],
          ['writer', `SUMMARY of ${e.task_id}: the agent inspected the columns and fit a boosted model.`],
        );
      }
    }
    assert.ok(shown.some((e) => e.writer === 'writer'));
    const chats = server.requests.filter((q) => q.messages !== undefined);
    const asked = chats.length;
    assert.ok(asked >= verified.length);
    for (const t of verified) {
      const q = chats.find(
        (c) =>
          taskOf(c.messages[0].content) === t.task_id &&
          t.turns.some((x) => x.code && c.messages[0].content.includes(x.code.trim().split('\n')[0])),
      );
      assert.ok(q, `a request holds the actions of ${t.group_id}#${t.sample}`);
      const prompt = q!.messages[0].content;
      const description = await readFile(
        join(await outputsOf(dir, 'verified'), 'tasks', t.task_id, 'public', 'description.md'),
        'utf8',
      );
      assert.ok(prompt.includes(description.trim().split('\n')[0]), 'the task description');
      // What the grader or the agent's runs reported back stays out.
      assert.not.ok(prompt.includes(String(t.evaluation!.score)), 'no score');
      for (const turn of t.turns)
        if (turn.observation.trim().length > 20)
          assert.not.ok(prompt.includes(turn.observation.trim()), 'no observation');
    }
    // A rebuild of the same node, its response cache gone: every summary comes from the node's items.
    await rm(join(dir, '.mlepipe', 'llm'), { recursive: true, force: true });
    const again = await cli(['run', 'e.yaml', '--rebuild', 'rl'], { cwd: dir });
    assert.is(again.exitCode, 0, again.stderr);
    assert.is(server.requests.filter((q) => q.messages !== undefined).length, asked, 'no new summary request');
  } finally {
    await server.close();
  }
});

test('a summarizer that is not in models: is refused at its position', async () => {
  const dir = await tmpProject({
    't/.keep': '',
    'e.yaml': `name: bad
stages:
  rl: { uses: grpo, with: { tasks: t, split: all, shaping: { kind: spice, beta: 1, scorer: worker, summarizer: nobody } } }
`,
  });
  const r = await cli(['validate', 'e.yaml'], { cwd: dir });
  assert.is(r.exitCode, 2);
  assert.match(r.stderr, /e\.yaml:3:\d+: stages\.rl\.with\.shaping\.summarizer: no model named nobody in models:/);
});

test.run();
