// The sandbox service's β pilot for SPICE on verl (service-shaping.ts): the first pilot_steps steps plan
// with β null (scored, not shaped), the first plan of a later step calibrates β from their recorded scores
// as the worker's pilot does (calibrateBeta), and a reopened service keeps it; a pilot that scored nothing
// says why instead of shaping by a β it cannot know; a TIPS plan carries what its potential scores.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { calibrateBeta, shuffleScores } from '../../agents/shaping/returns.js';
import { TIPS_REQUEST } from '../../agents/shaping/tips.js';
import type { TurnScore } from '../../agents/shaping/types.js';
import type { EpisodeResult } from '../../agents/scaffolds/types.js';
import { byCodePoint, memberOrder, openShaping, shapingCalibration } from './service-shaping.js';
import { startReplayServer } from '../../test/llm/replay-server.js';
import { closedPort } from '../../test/helpers.js';
import { resolveModel } from '../../core/models.js';

const EPISODE = {
  scaffold: 'react',
  messages: [
    { role: 'system', content: 'Solve the task.' },
    { role: 'user', content: 'The task.' },
    { role: 'assistant', content: '<think>Look.</think>\n```python\nprint(1)\n```' },
    { role: 'user', content: 'exit code 0' },
  ],
  turns: [
    {
      turn: 0,
      action: 'code',
      code: 'print(1)',
      format_ok: true,
      exit_code: 0,
      timed_out: false,
      duration_ms: 1,
      observation: 'exit code 0',
    },
  ],
  submission: null,
  ended: 'max_turns',
} as unknown as EpisodeResult;

async function exportDir(bank: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'mlepipe-shaping-'));
  await mkdir(join(dir, 'shaping'));
  await writeFile(
    join(dir, 'shaping', 'config.json'),
    JSON.stringify({ kind: 'spice', kappa: [0.1, 0.3], pilot_steps: 2, references: 2, summaries: 'full', seed: 0 }),
  );
  await writeFile(join(dir, 'shaping', 'bank.jsonl'), bank);
  return dir;
}

const DEMO =
  JSON.stringify({
    task_id: 't1',
    text: 'A verified solution of t1: it (1) ran code (fit()).',
    source: 'demonstration',
    step: 0,
    from: 'd#0',
    writer: 'procedural',
  }) + '\n';

test('the first pilot_steps steps are the pilot; the next step calibrates beta from their scores, kept across a restart', async () => {
  const dir = await exportDir(DEMO);
  const s = (await openShaping(dir))!;
  const beta = async (step: number) => ((await s.plan('t1', step, EPISODE)) as { beta: number | null }).beta;
  assert.is(await beta(3), null);
  await s.record('t1', 3, [{ turn: 0, category: 'execution', d: 0.2 }]);
  assert.is(await beta(4), null);
  await s.record('t1', 4, [
    { turn: 0, category: 'execution', d: -0.6 },
    { turn: 1, category: 'execution', d: null, reason: 'overflow' },
  ]);
  const want = calibrateBeta([0.2, -0.6], [0.1, 0.3])!.beta;
  assert.ok(Math.abs(want - 0.5) < 1e-3, `β = 0.2 / mean|d| = ${want}`);
  assert.is(await beta(5), want);
  // Scores recorded later change nothing: β is fixed once calibrated.
  await s.record('t1', 5, [{ turn: 0, category: 'execution', d: 5 }]);
  assert.is(await beta(6), want);
  const again = (await openShaping(dir))!;
  assert.is(((await again.plan('t1', 7, EPISODE)) as { beta: number }).beta, want);
  const cal = await shapingCalibration(dir);
  assert.equal([cal?.first_step, cal?.turns, cal?.beta], [3, 2, want]);
  assert.equal(JSON.parse(await readFile(join(dir, 'shaping', 'calibration.json'), 'utf8')).turns, 2);
});

test('a SPICE plan carries each reference message with its summary and the text around it, to rebuild it around a cut summary', async () => {
  const s = (await openShaping(await exportDir(DEMO)))!;
  const plan = (await s.plan('t1', 3, EPISODE)) as {
    references: { role: string; content: string }[];
    reference_summaries: string[];
    reference_frame: string[];
  };
  assert.equal(plan.reference_summaries, ['A verified solution of t1: it (1) ran code (fit()).']);
  assert.is(plan.reference_frame.length, 2);
  // turn_scores.py writes frame[0] + a word prefix of the summary + frame[1]: the whole summary gives the message itself.
  assert.equal(
    plan.references.map((m) => m.content),
    plan.reference_summaries.map((t) => plan.reference_frame[0] + t + plan.reference_frame[1]),
  );
});

test("a TIPS plan carries the summaries, the request and each call's history after its observation", async () => {
  const dir = await exportDir(DEMO);
  await writeFile(
    join(dir, 'shaping', 'config.json'),
    JSON.stringify({ kind: 'tips', beta: 0.3, references: 2, summaries: 'full', seed: 0 }),
  );
  const plan = (await (await openShaping(dir))!.plan('t1', 1, EPISODE)) as {
    kind: string;
    summaries: string[];
    request: unknown;
    references?: unknown;
    beta: number;
    calls: { turn: number; history: unknown[]; after: unknown[] }[];
  };
  assert.equal(
    [plan.kind, plan.summaries, plan.request, plan.references, plan.beta],
    ['tips', ['A verified solution of t1: it (1) ran code (fit()).'], TIPS_REQUEST, undefined, 0.3],
  );
  assert.equal(
    plan.calls.map((c) => [c.turn, c.history.length, c.after.length]),
    [[0, 2, 4]],
  );
});

/** The export's shaping under the shuffle control: β 1, groups of three, waiting `groupWaitMs` for a group's last. */
async function shuffleConfig(dir: string, groupWaitMs: number): Promise<void> {
  const config = { kind: 'spice', beta: 1, shuffle: true, group_size: 3, group_wait_ms: groupWaitMs };
  await writeFile(
    join(dir, 'shaping', 'config.json'),
    JSON.stringify({ ...config, references: 2, summaries: 'full', seed: 0 }),
  );
}

/** One episode's scores: execution calls with these d values (null: over the context). */
const member = (ds: (number | null)[]): TurnScore[] =>
  ds.map((d, turn) => ({ turn, category: 'execution', d, ...(d === null ? { reason: 'overflow' as const } : {}) }));

test("the shuffle control answers a task's group together, its d values permuted among the same category's calls", async () => {
  const dir = await exportDir(DEMO);
  await shuffleConfig(dir, 60_000);
  const s = (await openShaping(dir))!;
  const sent = [member([0.1, 0.2]), member([0.3, null]), member([0.4])];
  let answered = 0;
  const pending = sent.map((m) => s.record('t1', 2, m).then((r) => (answered++, r)));
  const got = await Promise.all(pending);
  assert.is(answered, 3);
  // Each keeps its turns and unscored calls; the scored values are the group's, permuted as the worker permutes them.
  assert.equal(
    got.map((g) => g.map((t) => [t.turn, t.d === null])),
    sent.map((g) => g.map((t) => [t.turn, t.d === null])),
  );
  // The members in the order of their scores (memberOrder), whatever order they reported in.
  const order = sent.map((g, i) => i).sort((a, b) => byCodePoint(memberOrder(sent[a]), memberOrder(sent[b])));
  const flat = order.flatMap((i, m) => sent[i].map((t) => ({ ...t, task_id: 't1', member: m })));
  const want = shuffleScores(flat, '0:2');
  assert.equal(
    order.flatMap((i) => got[i].map((t) => t.d)),
    want.map((t) => t.d),
  );
  // Reported in the other order (to another service of the same export), each episode gets the same answer.
  const reversed = (await openShaping(dir))!;
  const back: TurnScore[][] = [[], [], []];
  await Promise.all(
    [2, 1, 0].map(async (i, k) => {
      await new Promise((r) => setTimeout(r, 20 * k));
      back[i] = await reversed.record('t1', 2, sent[i]);
    }),
  );
  assert.equal(back, got);
  assert.not.equal(
    got.flatMap((g) => g.map((t) => t.d)),
    flat.map((t) => t.d),
  );
  // A group whose last member never reports is answered after the wait, among those that did.
  await shuffleConfig(dir, 50);
  const lone = await (await openShaping(dir))!.record('t1', 3, member([0.5]));
  assert.equal(
    lone.map((t) => t.d),
    [0.5],
  );
  // A service that stops answers its waiting groups at once.
  await shuffleConfig(dir, 3_600_000);
  const stopping = (await openShaping(dir))!;
  const waiting = stopping.record('t1', 4, member([0.7]));
  stopping.close();
  assert.equal(
    (await waiting).map((t) => t.d),
    [0.7],
  );
});

test("a verified episode's summary is the summarizer's paragraph, or the record's with the reason when the model fails", async () => {
  const server = await startReplayServer([
    { content: '<think>Short.</think>It fit a linear model on the engineered features.' },
  ]);
  try {
    const dir = await exportDir('');
    // No retries: the unreachable summarizer below fails at once instead of after the backoff (about 12 s).
    const config = (url: string) =>
      JSON.stringify({
        kind: 'spice',
        beta: 1,
        references: 2,
        summaries: 'full',
        seed: 0,
        summarizer: {
          name: 'teacher',
          spec: resolveModel({ provider: 'openai', base_url: url, model: 'teacher-model', retries: 0 }),
        },
      });
    await writeFile(join(dir, 'shaping', 'config.json'), config(server.url));
    const s = (await openShaping(dir))!;
    await s.graded('t1', 2, EPISODE, true);
    assert.equal(
      s
        .bank()
        .entries()
        .map((e) => [e.text, e.writer, e.step]),
      [['It fit a linear model on the engineered features.', 'teacher', 2]],
    );
    // The summarizer read the task's actions, not its observations.
    assert.match(server.requests[0].messages[0].content, 'print(1)');
    await writeFile(join(dir, 'shaping', 'config.json'), config(`http://127.0.0.1:${await closedPort()}/v1`));
    const failing = (await openShaping(dir))!;
    await failing.graded('t2', 3, EPISODE, true);
    const e = failing
      .bank()
      .entries()
      .find((x) => x.task_id === 't2')!;
    assert.equal([e.writer, e.text.startsWith('A verified solution of t2')], ['procedural', true]);
    assert.match(e.fallback ?? '', /^teacher: /);
  } finally {
    await server.close();
  }
});

test('a pilot without a scored call fails the next plan with the reason', async () => {
  const s = (await openShaping(await exportDir('')))!;
  await s.plan('t1', 1, EPISODE);
  await s.record('t1', 1, [{ turn: 0, category: 'execution', d: null, reason: 'no-reference' }]);
  await s.record('t1', 2, [{ turn: 0, category: 'execution', d: null, reason: 'no-reference' }]);
  try {
    await s.plan('t1', 3, EPISODE);
    assert.unreachable('a pilot with nothing scored gave a beta');
  } catch (err) {
    assert.match(
      (err as Error).message,
      'the pilot (steps 1–2) scored no tool call (2 calls, 2 without a reference, 0 over the context; 0 summaries in the bank)',
    );
  }
});

test.run();
