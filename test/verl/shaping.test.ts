// SPICE on verl, through the built CLI: a grpo stage with shaping exports the
// per-turn estimator, the shaping agent loop and the sandbox service's bank
// (seeded from the verified demonstrations upstream), and passes
// mlepipe_verl.check in .venv/verl; the service's /shaping/plan gives an
// episode's calls and the step's references, its /grade adds a verified
// episode to the bank for later steps only, and a restarted service has the
// bank it had.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { parse, stringify } from 'yaml';
import { referenceMessage } from '../../agents/shaping/spice.js';
import { ROOT, cli, outputsOf, readJsonl, tmpProject } from '../helpers.js';
import { exportExperiment, serveExport } from './serve-export.js';

const PY = join(ROOT, '.venv', 'verl', 'bin', 'python');
const CHECKS = join(ROOT, 'test', 'verl', 'checks.py');

const EXP = exportExperiment('shaped', {
  needs: 'verified, demos',
  rlWith: 'shaping: { kind: spice, beta: 0.5, references: 2 }',
});

type Entry = { task_id: string; text: string; source: string; step: number };
type Traj = {
  task_id: string;
  messages: { role: string; content: string }[];
  turns: { action: string; code?: string }[];
  submission: string | null;
  ended: string;
  scaffold: string;
  variables: { success: number };
};

const dir = await tmpProject({ 'e.yaml': EXP });
const made = await cli(['run', 'e.yaml', '--only', 'rl'], { cwd: dir, env: { TINY_KEY: 'sk-test' } });
const verl = made.exitCode === 0 ? join(await outputsOf(dir, 'rl'), 'verl') : '';

const serve = () => serveExport(verl, dir);

test('the export carries the estimator, the shaping loop and the bank, and passes verl checks', async () => {
  assert.is(made.exitCode, 0, made.stderr);
  const config = JSON.parse(await readFile(join(verl, 'shaping', 'config.json'), 'utf8'));
  assert.equal(config, { kind: 'spice', beta: 0.5, references: 2, summaries: 'full', seed: 0 });
  const demos = (await readJsonl(join(await outputsOf(dir, 'demos'), 'trajectories.jsonl'))) as Traj[];
  const bank = (await readJsonl(join(verl, 'shaping', 'bank.jsonl'))) as Entry[];
  assert.ok(
    demos.some((t) => t.variables.success === 1),
    'a verified demonstration to seed the bank with',
  );
  assert.is(bank.length, demos.filter((t) => t.variables.success === 1).length);
  assert.ok(bank.every((e) => e.source === 'demonstration' && e.step === 0));
  const loop = parse(await readFile(join(verl, 'agent_loop.yaml'), 'utf8')) as Array<{ shaping?: boolean }>;
  assert.is(loop[0].shaping, true);
  assert.match(await readFile(join(verl, 'trainer_overrides.yaml'), 'utf8'), 'algorithm.adv_estimator=mlepipe_turn');
  assert.match(
    await readFile(join(verl, 'launch.sh'), 'utf8'),
    'VERL_USE_EXTERNAL_MODULES\\": \\"mlepipe_verl.turn_credit',
  );
  // The estimator without the loop that shapes, in a variant whose agent loop file is the export's without
  // `shaping: true`: the check refuses it. Both checks in one interpreter (test/verl/checks.py, each ending as
  // `python -m mlepipe_verl.check FILE` would): importing verl is most of a check's time.
  const unshaped = await mkdtemp(join(tmpdir(), 'verl-unshaped-'));
  await writeFile(join(unshaped, 'agent_loop.yaml'), stringify(loop.map(({ shaping: _s, ...e }) => e)));
  const LOOP = 'actor_rollout_ref.rollout.agent.agent_loop_config_path=';
  const { overrides } = parse(await readFile(join(verl, 'trainer_overrides.yaml'), 'utf8')) as { overrides: string[] };
  assert.ok(overrides.includes(`${LOOP}agent_loop.yaml`));
  await writeFile(
    join(unshaped, 'overrides.yaml'),
    stringify({
      overrides: overrides.map((o) => (o.startsWith(LOOP) ? `${LOOP}${join(unshaped, 'agent_loop.yaml')}` : o)),
    }),
  );
  const checks = await execa(PY, [CHECKS, 'trainer_overrides.yaml', join(unshaped, 'overrides.yaml')], {
    cwd: verl,
    reject: false,
  });
  assert.is(checks.exitCode, 0, checks.stderr.slice(-3000));
  const [r, bad] = checks.stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { exit_code: number; stdout: string; stderr: string });
  assert.is(r.exit_code, 0, r.stderr.slice(-3000));
  const got = JSON.parse(r.stdout.trim().split('\n').pop()!) as { adv_estimator: string; shaping: boolean };
  assert.equal([got.adv_estimator, got.shaping], ['mlepipe_turn', true]);
  assert.is(bad.exit_code, 1, bad.stdout);
  assert.match(bad.stderr, 'reads per-turn shaping the agent loop does not make');
  // The same stage run as a Ray job (trainer: verl) validates and plans.
  const plan = await cli(['plan', 'e.yaml', '-S', 'stages.rl.with.trainer=verl', '--json'], { cwd: dir });
  assert.is(plan.exitCode, 0, plan.stderr);
  assert.equal(
    (JSON.parse(plan.stdout) as { nodes: { id: string; action: string }[] }).nodes.find((n) => n.id === 'rl')?.action,
    'run',
  );
});

/** The episode `t` with one more validation before its answer: a solution the bank does not hold yet. */
function withOneMoreValidation(t: Traj) {
  const n = t.turns.length;
  return {
    scaffold: 'react',
    messages: [
      ...t.messages.slice(0, -1),
      { role: 'assistant', content: '<think>Check again.</think>\n<validate>submission.csv</validate>' },
      { role: 'user', content: 'valid' },
      t.messages[t.messages.length - 1],
    ],
    turns: [
      ...t.turns.slice(0, -1),
      {
        turn: n - 1,
        action: 'validate',
        format_ok: true,
        exit_code: null,
        timed_out: false,
        duration_ms: 1,
        observation: 'valid',
      },
      { ...t.turns[n - 1], turn: n },
    ],
    submission: t.submission,
    ended: 'answer',
    step: 3,
  };
}

/** Runs the code turns of `t` in the service's `session`, as the agent loop did. */
async function runCode(svc: Awaited<ReturnType<typeof serve>>, session: string, t: Traj): Promise<void> {
  for (const [i, x] of t.turns.entries())
    if (x.action === 'code') await svc.post('/run', { session, code: x.code, turn: i, timeout_ms: 60_000 });
}

/** What /shaping/plan answers. */
type ShapingPlan = {
  calls: { turn: number; category: string; prefix_chars: number; call_chars: number }[];
  references: { content: string }[];
  beta: number;
};

/** Step 4's plan for `episode` from a service started afresh on the same export. */
async function planAfterRestart(task_id: string, episode: unknown): Promise<ShapingPlan> {
  const again = await serve();
  try {
    return (await again.post('/shaping/plan', { task_id, step: 4, episode })) as ShapingPlan;
  } finally {
    await again.stop();
  }
}

test("the service plans an episode's calls against the step's references; a verified episode joins the bank for later steps, and stays after a restart", async () => {
  assert.is(made.exitCode, 0, made.stderr);
  const demos = (await readJsonl(join(await outputsOf(dir, 'demos'), 'trajectories.jsonl'))) as Traj[];
  const t = demos.find((x) => x.variables.success === 1)!;
  const seeded = ((await readJsonl(join(verl, 'shaping', 'bank.jsonl'))) as Entry[]).filter(
    (e) => e.task_id === t.task_id,
  );
  const n = t.turns.length;
  const episode = withOneMoreValidation(t);
  const svc = await serve();
  try {
    const plan = (await svc.post('/shaping/plan', { task_id: t.task_id, step: 3, episode })) as ShapingPlan;
    // Code and validation turns are calls; the answer is not.
    assert.equal(
      plan.calls.map((c) => [c.turn, c.category]),
      episode.turns.flatMap((x, i) => (x.action === 'code' || x.action === 'validate' ? [[i, 'execution']] : [])),
    );
    assert.is(plan.calls.length, n);
    // The offsets are the reply's characters as Python counts them.
    const replies = episode.messages.filter((m) => m.role === 'assistant');
    for (const c of plan.calls)
      assert.match(
        [...replies[c.turn].content].slice(c.prefix_chars, c.prefix_chars + c.call_chars).join(''),
        /^(```|<validate>)/,
      );
    assert.equal(
      plan.references,
      seeded.map((e) => referenceMessage(e.text)),
    );
    assert.is(plan.beta, 0.5);

    // The same episode as a validation run: verified, and kept out of the bank.
    const val = (await svc.post('/open', { task: t.task_id })) as { session: string };
    await runCode(svc, val.session, t);
    assert.is(
      (
        (await svc.post('/grade', { session: val.session, episode: { ...episode, split: 'val' } })) as {
          variables: { success: number };
        }
      ).variables.success,
      1,
    );
    assert.is(
      ((await readJsonl(join(verl, 'shaping', 'bank.jsonl'))) as Entry[]).filter((e) => e.source === 'rl').length,
      0,
    );
    // Graded at step 3 (its code run again in a fresh session): verified, so the bank grows, tagged with the step.
    const { session } = (await svc.post('/open', { task: t.task_id })) as { session: string };
    await runCode(svc, session, t);
    const graded = (await svc.post('/grade', { session, episode })) as { variables: { success: number } };
    assert.is(graded.variables.success, 1);
    const bank = (await readJsonl(join(verl, 'shaping', 'bank.jsonl'))) as Entry[];
    const added = bank.filter((e) => e.source === 'rl');
    assert.equal(
      added.map((e) => [e.task_id, e.step]),
      [[t.task_id, 3]],
    );
    assert.match(added[0].text, 'validated the submission format');
    // Step 3 drew before it was verified; step 4 draws it.
    const same = (await svc.post('/shaping/plan', { task_id: t.task_id, step: 3, episode })) as ShapingPlan;
    assert.is(same.references.length, seeded.length);
    const next = (await svc.post('/shaping/plan', { task_id: t.task_id, step: 4, episode })) as ShapingPlan;
    assert.ok(next.references.some((m) => m.content.includes('validated the submission format')));
    await svc.post('/shaping/record', {
      task_id: t.task_id,
      step: 4,
      scores: [{ turn: 0, category: 'execution', d: 0.25 }],
    });
  } finally {
    await svc.stop();
  }
  const after = await planAfterRestart(t.task_id, episode);
  assert.ok(
    after.references.some((m) => m.content.includes('validated the submission format')),
    'the bank as it was before the restart',
  );
  assert.equal(await readJsonl(join(verl, 'shaping', 'scores.jsonl')), [
    { task_id: t.task_id, step: 4, scores: [{ turn: 0, category: 'execution', d: 0.25 }] },
  ]);
});

test("the Python loop and the service together: each call scored against the service's references, its beta·d on the output", async () => {
  assert.is(made.exitCode, 0, made.stderr);
  const demos = (await readJsonl(join(await outputsOf(dir, 'demos'), 'trajectories.jsonl'))) as Traj[];
  const task = demos.find((x) => x.variables.success === 1)!.task_id;
  const svc = await serve();
  let r;
  try {
    r = await execa(PY, [join(ROOT, 'test', 'verl', 'drive_shaped.py'), svc.url, task], {
      env: { MLEPIPE_SANDBOX_URL: svc.url },
      reject: false,
    });
  } finally {
    await svc.stop();
  }
  assert.is(r.exitCode, 0, r.stderr.slice(-3000));
  const out = JSON.parse(r.stdout.trim().split('\n').pop()!) as {
    shaping: number[];
    scored_requests: number;
    turns: string[];
  };
  assert.equal(out.turns, ['code', 'code', 'answer']);
  const records = (await readJsonl(join(verl, 'shaping', 'scores.jsonl'))) as {
    task_id: string;
    step: number;
    scores: { turn: number; d: number | null }[];
  }[];
  const mine = records.filter((x) => x.task_id === task && x.step === 2);
  assert.is(mine.length, 1);
  const scores = mine[0].scores;
  assert.equal(
    scores.map((x) => x.turn),
    [0, 1],
  );
  // The bank held one summary of the task: a plain and one reference branch per call.
  assert.is(out.scored_requests, 4);
  for (const x of scores) assert.ok(typeof x.d === 'number' && x.d > 0, JSON.stringify(x));
  assert.equal(
    out.shaping.map((v) => Number(v.toFixed(9))),
    [0.5 * scores[0].d!, 0.5 * scores[1].d!, 0].map((v) => Number(v.toFixed(9))),
  );
});

test.run();
