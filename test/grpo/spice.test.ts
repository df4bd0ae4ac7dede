// SPICE end to end through the built CLI on a CPU: generated tasks, scripted
// demonstrations whose verified solutions seed the solution bank, then the
// template policy trained with SPICE shaping scored by a tiny random-weight
// worker model. The pilot calibrates β into κ, every tool-call turn of every
// trajectory carries its score, and the shaping reaches the metrics and the
// tables. The same scored by an OpenAI-compatible server's echoed prompt
// log-probabilities (a local server with a fixed table). Bad shaping settings
// are refused at their position in the file. The first two tests share one
// cache, so their tasks and demonstrations are made once.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { callSpan } from '../../agents/shaping/calls.js';
import { exists } from '../../core/fs.js';
import type { TurnShaping } from '../../stages/grpo/shaping/score.js';
import { cli, outputsOf, readJsonl, sharedCacheSettings, tmpProject, shareTaskNodes } from '../helpers.js';
import { echoReply } from '../llm/echo.js';
import { startReplayServer } from '../llm/replay-server.js';

// The generated tasks come from another test file that built the same key, when one did (test/shared-tasks.ts).
shareTaskNodes();

// Generated tasks and scripted demonstrations whose verified solutions seed the solution bank.
const DEMOS = `  tasks: { uses: generate, with: { seeds: mlebench-tabular, count: 3, samples: [60, 100], seed: 4 } }
  verified: { uses: filter, needs: [tasks], with: { val: 0 } }
  demos: { uses: eval, needs: [verified], with: { policy: scripted:boosted, max_turns: 6 } }
`;
const { settings } = await sharedCacheSettings();

const EXPERIMENT = `name: spice
models:
  scorer: { provider: worker, tiny: 0, model: tiny-scorer, lora_rank: 8 }
stages:
${DEMOS}  rl:
    uses: grpo
    needs: [verified, demos]
    with:
      split: all
      reward: mltoolbench
      steps: 2
      batch_size: 2
      group_size: 3
      max_turns: 3
      seed: 0
      # The template policy's solver turns carry the whole solution kit: past 8,192 tokens they go unscored.
      shaping: { kind: spice, scorer: scorer, pilot_steps: 2, references: 2, max_length: 8192 }
  tips: { uses: grpo, needs: [verified, demos], with: { split: all, reward: mltoolbench, steps: 1, batch_size: 2, group_size: 2, max_turns: 3, seed: 0, shaping: { kind: tips, scorer: scorer, beta: 2, references: 2, max_length: 8192 } } }
tables:
  shaping: { from: rl, rows: curve, columns: [step, reward_mean, shaping_scored, shaping_mean_abs, beta] }
`;

/** The turns of a recorded episode whose reply makes a tool call (code or a validation), with their index `s`. */
function toolCallTurns(
  t: Awaited<ReturnType<typeof readJsonl>>[number],
): Array<{ s: number; action: string; reply?: string }> {
  return t.turns
    .map((turn: { action: string }, s: number) => ({
      s,
      action: turn.action,
      reply: t.messages.filter((m: { role: string }) => m.role === 'assistant')[s]?.content,
    }))
    .filter(
      (c: { action: string; reply?: string }) =>
        ['code', 'validate'].includes(c.action) && c.reply && callSpan('react', c.reply),
    );
}

test('a short SPICE run: pilot β inside κ, shaping on every tool-call turn, metrics in the table', async () => {
  const dir = await tmpProject({ 'e.yaml': EXPERIMENT }, settings);
  const r = await cli(['run', 'e.yaml'], { cwd: dir });
  assert.is(r.exitCode, 0, r.stderr);
  const rl = await outputsOf(dir, 'rl');
  const cal = JSON.parse(await readFile(join(rl, 'calibration.json'), 'utf8'));
  assert.ok(cal.turns > 0, 'the pilot scored some calls');
  assert.ok(cal.mean_abs_shaping >= 0.05 && cal.mean_abs_shaping <= 0.3, `pilot mean |β·d| ${cal.mean_abs_shaping}`);
  assert.ok(cal.in_range);
  const curve = await readJsonl(join(rl, 'metrics.jsonl'));
  assert.equal(
    curve.map((m) => m.step),
    [1, 2],
  );
  for (const m of curve) assert.is(m.beta, Number(cal.beta.toFixed(6)));
  // The bank started from the demonstrations; each step's references are drawn from it, at most K a task.
  const bank = JSON.parse(await readFile(join(rl, 'bank.json'), 'utf8')) as Array<{
    task_id: string;
    source: string;
    text: string;
  }>;
  assert.ok(bank.some((e) => e.source === 'demonstration'));
  let scored = 0;
  for (const k of [1, 2]) {
    const step = JSON.parse(await readFile(join(rl, 'shaping', `step_0000${k}.json`), 'utf8'));
    for (const refs of Object.values(step.references) as Array<Array<{ text: string }>>) {
      assert.ok(refs.length >= 1 && refs.length <= 2);
      for (const ref of refs) assert.ok(bank.some((e) => e.text === ref.text));
    }
    for (const t of await readJsonl(join(rl, 'steps', `step_0000${k}.jsonl`))) {
      if (t.crashed) continue;
      const calls = toolCallTurns(t);
      const turns = t.shaping.turns as TurnShaping[];
      assert.equal(
        turns.map((x) => x.turn),
        calls.map((c: { s: number }) => c.s),
        'one score per tool-call turn',
      );
      assert.is(t.shaping.rewards.length, Math.max(1, t.turns.length));
      for (const x of turns) {
        if (x.d === null) assert.is(x.shaping, 0);
        else {
          scored++;
          assert.ok(Math.abs(x.shaping - cal.beta * x.d) < 1e-9);
        }
      }
      // r_{i,s}: the shaping at its turn, the Eq. 5 outcome added at the last.
      const expect = t.shaping.rewards.map((_: number, s: number) =>
        turns.filter((x) => x.turn === s).reduce((a, x) => a + x.shaping, 0),
      );
      expect[expect.length - 1] += t.reward;
      t.shaping.rewards.forEach((x: number, s: number) =>
        assert.ok(Math.abs(x - expect[s]) < 1e-9, `reward of turn ${s}`),
      );
    }
  }
  assert.ok(scored > 0, 'some calls were scored in training');
  assert.is(
    scored,
    curve.reduce((a, m) => a + m.shaping_scored, 0),
  );
  assert.match(r.stdout, /shaping\nstep\s+reward_mean\s+shaping_scored\s+shaping_mean_abs\s+beta\n1\s/);
  // TIPS with beta as written: no pilot, the same records.
  const tips = await outputsOf(dir, 'tips');
  assert.not.ok(await exists(join(tips, 'calibration.json')));
  const turns = (await readJsonl(join(tips, 'steps', 'step_00001.jsonl'))).flatMap(
    (t) => (t.shaping?.turns ?? []) as TurnShaping[],
  );
  const tipsScored = turns.filter((x) => x.d !== null);
  assert.ok(tipsScored.length > 0, 'TIPS scored some calls');
  for (const x of tipsScored) assert.ok(Math.abs(x.shaping - 2 * x.d!) < 1e-12);
  assert.is(JSON.parse(await readFile(join(tips, 'shaping', 'step_00001.json'), 'utf8')).kind, 'tips');
});

test("scorer: an openai entry: every tool-call turn scored from the server's echoed prompt log-probabilities", async () => {
  const server = await startReplayServer([echoReply()]);
  try {
    const dir = await tmpProject(
      {
        'e.yaml': `name: echo-spice
models:
  judge: { provider: openai, base_url: "${server.url}", model: judge-7b, timeout_s: 30 }
stages:
${DEMOS}  rl: { uses: grpo, needs: [verified, demos], with: { split: all, reward: mltoolbench, steps: 1, batch_size: 1, group_size: 2, max_turns: 3, seed: 0, shaping: { kind: spice, scorer: judge, beta: 0.5, references: 1 } } }
`,
      },
      settings,
    );
    const r = await cli(['run', 'e.yaml'], { cwd: dir });
    assert.is(r.exitCode, 0, r.stderr);
    // The tasks and demonstrations are the first test's.
    assert.match(r.stderr, /done: 1 ran, 3 cached, 0 failed/);
    const rl = await outputsOf(dir, 'rl');
    const [refs] = Object.values(
      JSON.parse(await readFile(join(rl, 'shaping', 'step_00001.json'), 'utf8')).references,
    ) as Array<Array<{ text: string }>>;
    assert.is(refs.length, 1);
    let calls = 0;
    for (const t of await readJsonl(join(rl, 'steps', 'step_00001.jsonl'))) {
      assert.not.ok(t.crashed, 'no rollout crashed');
      const turns = t.shaping.turns as TurnShaping[];
      calls += turns.length;
      // Every call fits the server's context: each has d and 0.5·d at its turn.
      for (const x of turns) {
        assert.ok(typeof x.d === 'number' && x.d !== 0, `turn ${x.turn}: d ${x.d}`);
        assert.ok(Math.abs(x.shaping - 0.5 * x.d!) < 1e-12);
        assert.ok(
          Math.abs(t.shaping.rewards[x.turn] - x.shaping - (x.turn === t.turns.length - 1 ? t.reward : 0)) < 1e-9,
        );
      }
    }
    assert.ok(calls > 0, 'the template policy made tool calls');
    // Two prompts per call (plain and one reference), each the ChatML text of the history and the reply.
    const prompts = server.requests.flatMap((q) => q.prompt as string[]);
    assert.is(prompts.length, 2 * calls);
    assert.ok(server.requests.every((q) => q.echo === true && q.model === 'judge-7b'));
    assert.ok(prompts.every((p) => p.startsWith('<|im_start|>system\n') && p.includes('<|im_start|>assistant\n')));
    assert.is(prompts.filter((p) => p.includes(`SPICE_REFERENCE:\n${refs[0].text}`)).length, calls);
  } finally {
    await server.close();
  }
});

// Tasks with one-line descriptions: the tiny model's context is 1,024 tokens, and the ReAct prompt takes most of it.
const tinyTask = (id: string, what: string): Record<string, string> => ({
  [`t/${id}/task.json`]: JSON.stringify({
    id,
    modality: 'tabular',
    task_type: 'classification',
    metric: 'accuracy',
    is_lower_better: false,
  }),
  [`t/${id}/public/description.md`]: `${what}\n`,
  [`t/${id}/private/evaluator.py`]: 'import json\nprint(json.dumps({"error": "not graded here"}))\n',
});

test('scorer: worker on a policy served by the trainer worker: turn-level batches are accepted and every step is shaped', async () => {
  const dir = await tmpProject({
    ...tinyTask('alpha', 'Predict the label of each row.'),
    ...tinyTask('beta', 'Predict the price of each house.'),
    'e.yaml': `name: worker-spice
models:
  tiny: { provider: worker, tiny: 0, model: tiny-qwen3, lora_rank: 8, max_tokens: 10 }
rewards:
  verbose: reply_chars / 40
stages:
  rl: { uses: grpo, with: { policy: tiny, trainer: worker, tasks: t, split: all, reward: verbose, steps: 2, batch_size: 2, group_size: 3, max_turns: 2, lr: 0.01, seed: 3, shaping: { kind: spice, beta: 1, max_length: 4096 } } }
`,
  });
  const r = await cli(['run', 'e.yaml'], { cwd: dir });
  assert.is(r.exitCode, 0, r.stderr);
  const rl = await outputsOf(dir, 'rl');
  const curve = await readJsonl(join(rl, 'metrics.jsonl'));
  // The worker took both updates (it refuses turn-level batches whose advantages do not match the turns).
  assert.equal(
    curve.map((m) => [m.step, m.beta, typeof m.loss]),
    [
      [1, 1, 'number'],
      [2, 1, 'number'],
    ],
  );
  for (const t of await readJsonl(join(rl, 'steps', 'step_00001.jsonl'))) {
    // The random model's replies call nothing: no shaping, the outcome at the last turn.
    assert.equal(t.shaping.turns, []);
    assert.equal(t.shaping.rewards, [...new Array(t.turns.length - 1).fill(0), t.reward]);
  }
});

test('shaping settings that cannot work are refused at their position', async () => {
  const dir = await tmpProject({
    't/.keep': '',
    'e.yaml': `name: bad
stages:
  rl:
    uses: grpo
    with:
      tasks: t
      split: all
      tool_dropout: 0.2
      shaping: { kind: spice, beta: 1, kappa: [0.3, 0.05] }
  rl2: { uses: grpo, with: { tasks: t, split: all, trainer: worker, policy: nope, shaping: { kind: tips, scorer: nowhere } } }
  rl3: { uses: grpo, with: { tasks: t, split: all, shaping: { kind: spice, beta: 1, scorer: gpt } } }
  rl4: { uses: grpo, with: { tasks: t, split: all, shaping: { kind: spice, beta: 1, scorer: local, template: llama3 } } }
models:
  gpt: { provider: openai, model: gpt-4o }
  local: { provider: worker, tiny: 0, model: tiny }
`,
  });
  const r = await cli(['validate', 'e.yaml'], { cwd: dir });
  assert.is(r.exitCode, 2);
  assert.not.match(r.stderr, /\n\s+at /, 'no stack trace');
  assert.match(
    r.stderr,
    /e\.yaml:8:21: stages\.rl\.with\.tool_dropout: tool_dropout removes mlab's diagnostic tools; it needs scaffold: mlab/,
  );
  assert.match(
    r.stderr,
    /e\.yaml:9:\d+: stages\.rl\.with\.shaping\.scorer: scorer: worker scores with the policy's own trainer worker, so it needs trainer: worker/,
  );
  assert.match(r.stderr, /e\.yaml:9:\d+: stages\.rl\.with\.shaping\.beta: give beta \(as written\) or kappa/);
  assert.match(r.stderr, /e\.yaml:9:\d+: stages\.rl\.with\.shaping\.kappa: the range \[0\.3, 0\.05\] is empty/);
  assert.match(r.stderr, /e\.yaml:10:\d+: stages\.rl2\.with\.shaping\.scorer: no model named nowhere in models:/);
  assert.match(
    r.stderr,
    /e\.yaml:11:\d+: stages\.rl3\.with\.shaping\.scorer: model gpt has no base_url: a scorer is a provider: worker entry, an OpenAI-compatible server/,
  );
  assert.match(
    r.stderr,
    /e\.yaml:12:\d+: stages\.rl4\.with\.shaping\.template: template renders the prompts of an openai scorer/,
  );
});

test.run();
