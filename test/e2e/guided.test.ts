// Guided demonstration collection through the built CLI, on four training
// instances of one suite template: the guide stage writes guidance beside the
// tasks (never in their public/); a scripted teacher that follows it calls
// exactly the tools it lists and succeeds on more tasks than without it; the
// recorded messages are byte for byte those of an unguided run, the curate
// stage filters and deduplicates them (counts per rule, the TF-IDF embedder
// named), and the SFT dataset is those conversations unchanged, guidance-free.
// A model teacher (the replay server) is sent the guidance in its system
// prompt, exactly the recorded one plus the rendered guidance; a model writes
// the guidance when one is configured.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { renderGuidance, type GuidanceRecord } from '../../agents/guidance/index.js';
import type { Trajectory } from '../../agents/trajectory.js';
import { startReplayServer } from '../llm/replay-server.js';
import { cli, outputsOf, readJsonl, tmpProject } from '../helpers.js';

const SUITE = 'suite: { uses: mltoolbench, with: { split: train, templates: [tab-titanic], runs: 2 } }';

const EXP = `name: guided
models:
  base: { provider: worker, tiny: 0, model: tiny, lora_rank: 0 }
stages:
  ${SUITE}
  hints: { uses: guide, needs: [suite] }
  teach: { uses: eval, needs: [suite, hints], with: { scaffold: mlab, tools: all, policy: scripted:guided, guidance: hints, repeats: 2, max_turns: 12, step_timeout: 300 } }
  plain: { uses: eval, needs: [suite], with: { scaffold: mlab, tools: all, policy: scripted:guided, max_turns: 12, step_timeout: 300 } }
  demos: { uses: curate, needs: [teach] }
  tune: { uses: sft, needs: [demos], with: { model: base, dedup: false, val_fraction: 0, epochs: 1, batch_size: 2, lr: 0.001, max_length: 256 } }
`;

// Every line of the guidance as the teacher reads it (its context, each check with its reason, each rule).
const guidanceStrings = (g: GuidanceRecord) =>
  renderGuidance(g)
    .split('\n')
    .filter((l) => l.length > 12);

test('guided collection: the teacher follows the guidance, students never see it, curate and sft read the real interactions', async () => {
  const dir = await tmpProject({ 'e.yaml': EXP });
  const r = await cli(['run', 'e.yaml'], { cwd: dir });
  assert.is(r.exitCode, 0, r.stderr + r.stdout);
  const suite = await outputsOf(dir, 'suite');
  const hints = await outputsOf(dir, 'hints');
  const tasks = (await readdir(join(suite, 'tasks'))).sort();
  assert.is(tasks.length, 4);
  const guidance = new Map<string, GuidanceRecord>();
  for (const t of tasks) {
    guidance.set(t, JSON.parse(await readFile(join(hints, 'guidance', `${t}.json`), 'utf8')) as GuidanceRecord);
    assert.not.ok((await readdir(join(suite, 'tasks', t, 'public'))).some((f) => /guid/i.test(f)));
  }
  assert.ok([...guidance.values()].every((g) => g.source === 'procedural'));

  const teach = (await readJsonl(join(await outputsOf(dir, 'teach'), 'trajectories.jsonl'))) as Trajectory[];
  const plain = (await readJsonl(join(await outputsOf(dir, 'plain'), 'trajectories.jsonl'))) as Trajectory[];
  assert.is(teach.length, 8);
  for (const t of teach) {
    const g = guidance.get(t.task_id)!;
    // Exactly the tools the guidance lists, in its order.
    assert.equal(
      t.turns.filter((x) => x.action === 'tool').map((x) => x.name),
      g.inspect.map((c) => c.tool),
      t.task_id,
    );
    assert.is(t.guidance?.source, 'procedural');
    const same = plain.find((p) => p.task_id === t.task_id)!;
    // The student's view of the task is the unguided one, byte for byte.
    assert.is(t.messages[0].content, same.messages[0].content);
    assert.is(t.messages[1].content, same.messages[1].content);
    const text = JSON.stringify(t.messages);
    for (const s of guidanceStrings(g))
      assert.not.ok(text.includes(JSON.stringify(s).slice(1, -1)), `${t.task_id}: "${s}" in the messages`);
  }
  assert.ok(plain.every((p) => !p.turns.some((x) => x.action === 'tool')));
  const wins = (ts: Trajectory[]) => new Set(ts.filter((t) => t.variables.success === 1).map((t) => t.task_id)).size;
  assert.ok(wins(teach) > wins(plain), `guided ${wins(teach)} tasks vs unguided ${wins(plain)}`);

  const demos = await outputsOf(dir, 'demos');
  const report = JSON.parse(await readFile(join(demos, 'curation.json'), 'utf8')) as {
    read: number;
    kept: number;
    dropped: Record<string, number>;
    embedder: { name: string };
  };
  assert.is(report.read, 8);
  assert.is(report.embedder.name, 'tfidf');
  assert.is(report.kept + Object.values(report.dropped).reduce((a, b) => a + b, 0), 8);
  // Both repeats of a task are the same scripted run: one of each pair is a duplicate.
  assert.ok(report.dropped.duplicates >= wins(teach), JSON.stringify(report));
  const kept = (await readFile(join(demos, 'trajectories.jsonl'), 'utf8')).trim().split('\n');
  const teachLines = (await readFile(join(await outputsOf(dir, 'teach'), 'trajectories.jsonl'), 'utf8'))
    .trim()
    .split('\n');
  assert.ok(kept.every((l) => teachLines.includes(l)));
  for (const l of kept) {
    const t = JSON.parse(l) as Trajectory;
    assert.ok(t.variables.valid === 1 && t.variables.improvement > (t.starter_std ?? 0), l.slice(0, 200));
  }

  // The SFT dataset: the kept runs' conversations unchanged, and nothing of the guidance.
  const tune = await outputsOf(dir, 'tune');
  const data = await readFile(join(tune, 'dataset', 'train.jsonl'), 'utf8');
  const want = kept.map((l) =>
    JSON.stringify({
      messages: (JSON.parse(l) as Trajectory).messages.map((m) => ({ role: m.role, content: m.content })),
    }),
  );
  assert.equal(data.trim().split('\n').sort(), want.sort());
  for (const g of guidance.values())
    for (const s of guidanceStrings(g))
      assert.not.ok(data.includes(JSON.stringify(s).slice(1, -1)), `"${s}" in the SFT data`);
});

const ANSWER = [
  'Reflection: start.',
  'Research Plan and Status: look, then submit.',
  'Fact Check: none yet.',
  'Thought: list the files.',
];

test('a model writes the guidance and a model teacher is sent it: recorded system prompt + the rendered guidance, byte for byte', async () => {
  const good = {
    context: 'Improve survival prediction from the starter script; the features may need a look.',
    inspect: [{ tool: 'check_feature_normalization', args: { path: 'public/train.csv' }, why: 'column scales' }],
    act: [{ if: 'scales differ by orders of magnitude', then: 'standardize on training data and re-run' }],
  };
  const s = await startReplayServer([
    (body) => {
      if (body.messages[0].content.startsWith('You write guidance')) return { content: JSON.stringify(good) };
      const turn = body.messages.filter((m) => m.role === 'assistant').length;
      return {
        content: [
          ...ANSWER,
          turn === 0
            ? 'Action: List Files\nAction Input: {"dir_path": "public"}'
            : 'Action: Final Answer\nAction Input: {"final_answer": "done", "submission": "submission.csv"}',
        ].join('\n'),
      };
    },
  ]);
  try {
    const exp = `name: llm
models:
  writer: { provider: openai, base_url: "${s.url}", model: writer, api_key_env: TINY_KEY, timeout_s: 10 }
  teacher: { provider: openai, base_url: "${s.url}", model: teacher, api_key_env: TINY_KEY, timeout_s: 10 }
stages:
  suite: { uses: mltoolbench, with: { split: train, templates: [tab-titanic], limit: 1, runs: 2 } }
  hints: { uses: guide, needs: [suite], with: { model: writer } }
  teach: { uses: eval, needs: [suite, hints], with: { scaffold: mlab, tools: tabular, policy: teacher, guidance: true, max_turns: 3, step_timeout: 60 } }
`;
    const dir = await tmpProject({ 'e.yaml': exp });
    const r = await cli(['run', 'e.yaml'], { cwd: dir, env: { TINY_KEY: 'k' } });
    assert.is(r.exitCode, 0, r.stderr + r.stdout);
    const hints = await outputsOf(dir, 'hints');
    const files = await readdir(join(hints, 'guidance'));
    assert.is(files.length, 1);
    const g = JSON.parse(await readFile(join(hints, 'guidance', files[0]), 'utf8')) as GuidanceRecord;
    assert.is(g.source, 'writer');
    assert.equal(g.inspect, good.inspect);
    const [t] = (await readJsonl(join(await outputsOf(dir, 'teach'), 'trajectories.jsonl'))) as Trajectory[];
    const sent = s.requests.filter((q) => q.model === 'teacher');
    assert.is(sent.length, 2);
    for (const q of sent) assert.is(q.messages[0].content, t.messages[0].content + '\n\n' + renderGuidance(g));
    assert.not.match(JSON.stringify(t.messages), 'Guidance for this task');
    // After the system prompt, the teacher saw exactly the recorded conversation.
    assert.equal(sent[1].messages.slice(1), t.messages.slice(1, 4));
  } finally {
    await s.close();
  }
});

test('guidance: without a guide stage in needs:, or outside mlab, is refused before anything runs', async () => {
  const dir = await tmpProject({
    'e.yaml': `name: bad\nstages:\n  ${SUITE}\n  teach: { uses: eval, needs: [suite], with: { scaffold: mlab, policy: scripted:guided, guidance: true } }\n`,
  });
  const r = await cli(['validate', 'e.yaml'], { cwd: dir });
  assert.is(r.exitCode, 2);
  assert.match(
    r.stderr,
    /e\.yaml:4:\d+: .*eval reads task guidance from its inputs, but no stage in needs: gives any.*guidance comes from guide/,
  );
  assert.not.match(r.stderr, /\n\s+at /);
  const react = await tmpProject({
    'e.yaml': `name: bad\nstages:\n  ${SUITE}\n  hints: { uses: guide, needs: [suite] }\n  teach: { uses: eval, needs: [suite, hints], with: { scaffold: react, policy: scripted:guided, guidance: hints } }\n`,
  });
  const v = await cli(['validate', 'e.yaml'], { cwd: react });
  assert.is(v.exitCode, 2);
  assert.match(
    v.stderr,
    /e\.yaml:5:\d+: stages\.teach\.with\.guidance: guidance: only the mlab scaffold puts guidance in a teacher's prompt \(scaffold: react\)/,
  );
});

test.run();
