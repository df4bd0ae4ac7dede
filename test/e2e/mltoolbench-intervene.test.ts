// The reference agents and observation interventions on the suite's ID split,
// through the CLI (one run of one experiment: the suite is built once).
// `diagnose`, which fixes the starter where its tool answers point, succeeds
// (Eq. 5) on clearly more tasks than `blind`, which edits every starter the
// same way: the 95% intervals over tasks do not overlap. With scripted
// diagnose (which reads the structured part of tool answers), masking
// every diagnostic answer lowers its success, a paraphrase (procedural, or
// through a model on the local OpenAI-compatible replay server) leaves each
// run's outcome as it was. Trajectories keep the original answer beside what
// the agent was shown, and each arm is its own node. Paired arms branch the
// saved runs at one drawn return, replayed up to it, only that return changed.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startReplayServer, type ReplayServer } from '../llm/replay-server.js';
import { cli, tmpProject } from '../helpers.js';
import { suiteInstances } from '../../tasks/mltoolbench.js';

const EXP = (url: string) => `name: intervene
models:
  tiny: { provider: openai, base_url: "${url}", model: tiny-coder, api_key_env: TINY_KEY, timeout_s: 10 }
stages:
  suite: { uses: mltoolbench, with: { split: id, runs: 2 } }
  original: { uses: eval, needs: [suite], with: { scaffold: mlab, tools: all, policy: scripted:diagnose, max_turns: 12, step_timeout: 300 } }
  blind: { uses: eval, needs: [suite], with: { scaffold: mlab, tools: all, policy: scripted:blind, max_turns: 12, step_timeout: 300 } }
  masked: { uses: eval, needs: [suite], with: { scaffold: mlab, tools: all, policy: scripted:diagnose, max_turns: 12, step_timeout: 300, intervention: { mode: mask } } }
  paraphrased: { uses: eval, needs: [suite], with: { scaffold: mlab, tools: all, policy: scripted:diagnose, max_turns: 12, step_timeout: 300, intervention: { mode: paraphrase } } }
  reworded: { uses: eval, needs: [suite], with: { scaffold: mlab, tools: all, policy: scripted:diagnose, limit: 3, max_turns: 12, step_timeout: 300, intervention: { mode: paraphrase, tools: vision, paraphrase_model: tiny } } }
`;

type Turn = {
  action: string;
  name?: string;
  observation: string;
  evidence?: Record<string, unknown>;
  intervention?: { mode: string; original: { text: string; evidence: Record<string, unknown> } };
};
type Traj = { task_id: string; turns: Turn[] };

const PREFIX = 'In other words: ';
/** The most of the faulty instances a code-only agent may solve (docs/mltoolbench.md states it). */
const BLIND_SHARE = 0.1;
// The project of the first test: the paired arms branch its saved diagnose runs.
let project = '';

/** The model rewords by prefixing the report it is sent (everything after the prompt's blank line). */
const rewordByPrefix = (body: ReplayServer['requests'][number]) => ({
  content: PREFIX + body.messages[0].content.split('\n\n').slice(1).join('\n\n'),
  usage: { prompt_tokens: 30, completion_tokens: 30 },
});

/** Each arm's output folder, by stage name. */
async function armOutputs(dir: string, env: Record<string, string>): Promise<Record<string, string>> {
  return Object.fromEntries(
    await Promise.all(
      ['original', 'masked', 'paraphrased', 'reworded', 'blind'].map(
        async (s) => [s, (await cli(['outputs', 'e.yaml', s], { cwd: dir, env })).stdout.trim()] as const,
      ),
    ),
  );
}

/** An arm's one row of its policy table. */
const rowOf = async (out: string) =>
  (JSON.parse(await readFile(join(out, 'rows.json'), 'utf8')) as { policy: Array<Record<string, number>> }).policy[0];
/** An arm's success on each task. */
const runsOf = async (out: string) =>
  new Map(
    (await readFile(join(out, 'results.jsonl'), 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { task_id: string; success: boolean })
      .map((x) => [x.task_id, x.success]),
  );
/** An arm's trajectories. */
const trajsOf = async (out: string) =>
  (await readFile(join(out, 'trajectories.jsonl'), 'utf8'))
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Traj);

/** Every tool turn of these trajectories. */
const tools = (ts: Traj[]) => ts.flatMap((t) => t.turns.filter((x) => x.action === 'tool'));
/** The turns whose call came back with an answer. */
const answered = (ts: Turn[]) => ts.filter((t) => !t.observation.startsWith('error:'));

/** The ID split's instances that carry a fault. */
const faultyIds = () =>
  suiteInstances()
    .filter((i) => i.split === 'id' && i.config !== 'healthy')
    .map((i) => i.id);
/** The ID split's healthy instances. */
const HEALTHY = ['cv-id-05', 'nlp-id-05', 'tabular-id-05', 'time_series-id-05', 'graph-id-05'].map(
  (x) => `mltb-v1-${x}`,
);

/** A masked answer: the agent is told the findings are unavailable; the tool's own evidence is kept aside. */
function checkMaskedTurn(t: Turn): void {
  assert.is(t.intervention?.mode, 'mask');
  assert.match(t.observation, /measurements, conclusions and suggestions are unavailable/);
  assert.ok(
    Object.values(t.evidence ?? {}).every((v) => v === 'unavailable' || (typeof v === 'object' && v !== null)),
    JSON.stringify(t.evidence),
  );
  assert.equal(Object.keys(t.evidence ?? {}), Object.keys(t.intervention!.original.evidence));
  assert.ok(Object.values(t.intervention!.original.evidence).some((v) => v !== 'unavailable'));
}

/**
 * The model-worded arm: only the vision tools' answers went to the model, the agent read its words, and every
 * run ended as the original's did.
 */
function checkReworded(
  worded: Turn[],
  requests: ReplayServer['requests'],
  rw: Map<string, boolean>,
  ro: Map<string, boolean>,
): void {
  const isVision = (t: Turn) => t.name === 'image_normalization_stats' || t.name === 'class_balance_check';
  const vision = worded.filter(isVision);
  assert.ok(
    vision.some((t) => t.name === 'image_normalization_stats') && vision.some((t) => t.name === 'class_balance_check'),
  );
  for (const t of vision) assert.is(t.observation, PREFIX + t.intervention!.original.text);
  assert.ok(worded.filter((t) => !isVision(t)).every((t) => t.intervention === undefined));
  assert.is(requests.length, vision.length);
  assert.match(
    requests[0].messages[0].content,
    /^Rewrite this diagnostic report from the tool (image_normalization_stats|class_balance_check)/,
  );
  for (const [id, ok] of rw) assert.is(ok, ro.get(id), id);
}

test("ID split: diagnose beats blind; masking lowers diagnose's success, paraphrasing keeps every outcome; the trajectory keeps both answers", async () => {
  const server = await startReplayServer([rewordByPrefix]);
  try {
    const dir = (project = await tmpProject({ 'e.yaml': EXP(server.url) }));
    const env = { TINY_KEY: 'sk-test' };
    const r = await cli(['run', 'e.yaml'], { cwd: dir, env });
    assert.is(r.exitCode, 0, r.stderr + r.stdout);
    const outs = await armOutputs(dir, env);
    // Each arm is a node of its own: the intervention is part of the key.
    assert.is(new Set(Object.values(outs)).size, 5);
    const [row, runs, trajs] = [
      (s: string) => rowOf(outs[s]),
      (s: string) => runsOf(outs[s]),
      (s: string) => trajsOf(outs[s]),
    ];
    const [o, m, p] = [await row('original'), await row('masked'), await row('paraphrased')];
    const [ro, rm, rp] = [await runs('original'), await runs('masked'), await runs('paraphrased')];
    const report = `original ${o.success} [${o.success_lo}, ${o.success_hi}], masked ${m.success} [${m.success_lo}, ${m.success_hi}], paraphrased ${p.success} [${p.success_lo}, ${p.success_hi}]`;
    console.log(report);
    assert.is(o.tasks, 25);
    // The same calls are made in every arm (the agent's plan does not depend on the answers).
    assert.is(m.tool_calls, o.tool_calls, report);
    assert.ok(m.success < o.success, report);
    // Without the answers only what the script itself shows is fixed: no run succeeds that did not before.
    for (const [id, ok] of rm) assert.ok(!ok || ro.get(id), `${id} succeeds only when masked`);
    assert.equal([...rp], [...ro], report);

    // What the agent saw and what the tool said, on every tool turn. A call that failed is shown as it failed;
    // every answer that came back is changed.
    const masked = answered(tools(await trajs('masked')));
    assert.ok(masked.length > 0);
    for (const t of masked) checkMaskedTurn(t);
    const plain = answered(tools(await trajs('original')));
    assert.ok(
      plain.length === masked.length && plain.every((t) => t.intervention === undefined && t.evidence !== undefined),
    );
    const para = answered(tools(await trajs('paraphrased')));
    assert.is(para.length, masked.length);
    for (const t of para) {
      assert.match(t.observation, new RegExp(`^Findings of ${t.name}:\\n\\* `));
      assert.equal(t.evidence, t.intervention!.original.evidence);
    }

    // The model-worded arm: only vision tools' answers (the pixel statistics and the class count) went to
    // the model, and the agent read its words.
    checkReworded(tools(await trajs('reworded')), server.requests, await runs('reworded'), ro);

    // The reference agents: diagnose against blind, both always with a valid submission.
    const b = await row('blind');
    assert.is(o.valid_submission, 100);
    assert.is(b.valid_submission, 100);
    assert.ok(
      o.success_lo > b.success_hi,
      `diagnose ${o.success} [${o.success_lo}, ${o.success_hi}] vs blind ${b.success} [${b.success_lo}, ${b.success_hi}]`,
    );
    assert.ok(o.tool_calls > 1);
    assert.ok(o.coverage_tabular > 0 && o.coverage_vision > 0 && o.coverage_graph > 0);
    assert.is(b.tool_calls, 0);
    // The suite rewards diagnosis: an agent that reads only the code and edits it by a fixed recipe
    // solves at most BLIND_SHARE of the instances that carry a fault.
    const rb = await runs('blind');
    const faulty = faultyIds();
    assert.is(faulty.length, 20);
    const blindSolved = faulty.filter((id) => rb.get(id));
    assert.ok(
      blindSolved.length <= BLIND_SHARE * faulty.length,
      `blind solves ${blindSolved.length} of ${faulty.length} faulty instances: ${blindSolved.join(', ')}`,
    );
    // Healthy instances leave diagnose nothing to fix, so it cannot succeed on them.
    const healthy = HEALTHY;
    assert.ok(
      healthy.every((id) => ro.get(id) === false),
      JSON.stringify(healthy.map((id) => ro.get(id))),
    );
  } finally {
    await server.close();
  }
});

const PAIRED = `name: paired
stages:
  suite: { uses: mltoolbench, with: { split: id, runs: 2 } }
  original: { uses: eval, needs: [suite], with: { scaffold: mlab, tools: all, policy: scripted:diagnose, max_turns: 12, step_timeout: 300 } }
  'true': { uses: eval, needs: [suite, original], with: { scaffold: mlab, tools: all, policy: scripted:diagnose, limit: 6, max_turns: 12, step_timeout: 300, intervention: { mode: none, branch: original } } }
  mask1: { uses: eval, needs: [suite, original], with: { scaffold: mlab, tools: all, policy: scripted:diagnose, limit: 10, max_turns: 12, step_timeout: 300, intervention: { mode: mask, branch: original } } }
  wrong: { uses: eval, needs: [suite], with: { scaffold: mlab, policy: scripted:diagnose, intervention: { mode: mask, branch: original } } }
`;

type Branched = Traj & {
  sample: number;
  branch: { from: string; turn: number | null; tool?: string; replay_mismatches?: number };
  variables: { success: number };
};

/** The trajectories of stage `s` of paired.yaml in the project `dir`. */
const branchedRuns = async (dir: string, s: string) =>
  (
    await readFile(
      join((await cli(['outputs', 'paired.yaml', s], { cwd: dir })).stdout.trim(), 'trajectories.jsonl'),
      'utf8',
    )
  )
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Branched);

test('paired arms branch each saved run at one drawn return: the same turn in every arm, the replay rebuilds the run, only that return changes', async () => {
  assert.ok(project, 'the first test made the project');
  await writeFile(join(project, 'paired.yaml'), PAIRED);
  // A branch names a stage in its needs:.
  const bad = await cli(['validate', 'paired.yaml'], { cwd: project });
  assert.is(bad.exitCode, 2);
  assert.match(
    bad.stderr,
    /paired\.yaml:7:\d+: stages\.wrong\.with\.intervention\.branch: "original" is not in this stage's needs: \(suite\)/,
  );
  await writeFile(
    join(project, 'paired.yaml'),
    PAIRED.split('\n')
      .filter((l) => !l.includes('wrong:'))
      .join('\n'),
  );
  const r = await cli(['run', 'paired.yaml'], { cwd: project });
  assert.is(r.exitCode, 0, r.stderr);
  // The suite and the saved runs are the first test's.
  assert.match(r.stderr, /done: 2 ran, 2 cached, 0 failed/);
  const read = (s: string) => branchedRuns(project, s);
  const [orig, same, mask] = [await read('original'), await read('true'), await read('mask1')];
  const key = (t: Branched) => `${t.task_id}#${t.sample}`;
  const by = (ts: Branched[]) => new Map(ts.map((t) => [key(t), t]));
  const [O, T, M] = [by(orig), by(same), by(mask)];
  // The arms branch the first instances of the saved runs: six as given, ten masked.
  assert.is(T.size, 6);
  assert.is(M.size, 10);
  let branched = 0;
  let flipped = 0;
  let replayed = 0;
  for (const [k, m] of M) {
    const [t, o] = [T.get(k), O.get(k)!];
    // One drawn return per saved run, the same in every arm.
    if (t) assert.is(t.branch.turn, m.branch.turn, k);
    const diagnostic = o.turns.some((x) => x.action === 'tool' && x.evidence);
    if (m.branch.turn === null) {
      // No diagnostic return: the saved run, with its outcome, in every arm.
      assert.not.ok(diagnostic, k);
      for (const x of t ? [t, m] : [m]) assert.equal(x.turns, o.turns);
      if (t) assert.is(t.branch.turn, null);
      continue;
    }
    branched++;
    const at = m.branch.turn;
    assert.is(o.turns[at].action, 'tool', k);
    assert.is(m.branch.tool, o.turns[at].name);
    // The replay rebuilt the saved run up to the branch (the same observations, run times aside).
    for (const x of t ? [t, m] : [m]) assert.is(x.branch.replay_mismatches, 0, `${k}: ${JSON.stringify(x.branch)}`);
    if (t) {
      // As given, the scripted agent goes on exactly as it did.
      replayed++;
      assert.equal(
        t.turns.map((x) => x.name ?? x.action),
        o.turns.map((x) => x.name ?? x.action),
        k,
      );
      assert.is(t.variables.success, o.variables.success, k);
    }
    // Only the drawn return is changed; the answers before and after it are shown as given.
    m.turns.forEach((x, i) => assert.is(x.intervention?.mode, i === at ? 'mask' : undefined, `${k} turn ${i}`));
    assert.match(m.turns[at].observation, /unavailable for this call/);
    assert.equal(m.turns[at].intervention!.original.evidence, o.turns[at].evidence);
    // Without that answer only what the rest shows is fixed: a mask can lose a success, never add one.
    assert.ok(m.variables.success <= o.variables.success, k);
    if (m.variables.success < o.variables.success) flipped++;
  }
  assert.ok(replayed > 0, 'the arm as given branched some run');
  console.log(`paired: ${branched} of ${M.size} runs branched, ${flipped} successes lost under one masked return`);
  assert.ok(branched > M.size / 2, `${branched} branched`);
  assert.ok(flipped > 0, 'masking one return changes some outcome');
});

test.run();
