// The MLToolBench training chain on a CPU with a model that really acts:
// guided demonstrations from a scripted teacher, curated; a tiny random-weight
// Qwen3 (its tokenizer trained here on those demonstrations, its context long
// enough for the mlab prompt) fine-tuned on them until it writes the
// teacher's opening action; then GRPO from that checkpoint on the same worker
// with SPICE shaping scored by the policy's own weights, the solution
// summaries written by the base model. The policy's tool
// calls are scored turn by turn, the pilot calibrates β into κ, and the
// shaping reaches the node's metrics, a table and a figure. It runs the
// paper's own files (guided-sft.yaml and table3-rl.yaml), CPU-sized by -S.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { copyFile, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { execa } from 'execa';
import { summarise } from '../../agents/shaping/bank.js';
import { toolCalls } from '../../agents/shaping/calls.js';
import { trainerPython } from '../../gpu/trainer/local.js';
import type { TurnShaping } from '../../stages/grpo/shaping/score.js';
import { cli, readJsonl, ROOT, tmpProject } from '../helpers.js';

const TOOLS = '[detect_missing_values, check_feature_normalization]';

// The paper's own config (table3-rl.yaml on guided-sft.yaml), made CPU-sized by -S: two tab-titanic
// training instances, the procedural guidance writer and the scripted guided teacher, one backbone (the
// tiny model), and the SFT and GRPO settings a tiny model can learn under. The stage graph is the config's.
const CPU = [
  'stages.train_tasks.with={split: train, templates: [tab-titanic], limit: 2, runs: 2}',
  'stages.guidance.with={}',
  `stages.collect.with={scaffold: mlab, tools: ${TOOLS}, policy: scripted:guided, guidance: guidance, max_turns: 8, step_timeout: 300}`,
  'stages.backbones.matrix.model=[qwen3_8b]',
  'models.qwen3_8b={provider: worker, path: tiny-mlab, model: tiny-mlab, lora_rank: 0, max_tokens: 48}',
  'models.sft_policy.max_tokens=160',
  // The SFT keeps each demonstration's prompt and first replies (2,600 tokens; the App. E prompt is 2,200) and trains long enough at a
  // high rate for the tiny model to learn them; GRPO samples at a lower temperature so that it writes them.
  'stages.sft.with={model: qwen3_8b, dedup: false, val_fraction: 0, epochs: 80, batch_size: 1, lr: 0.01, schedule: constant, max_length: 2600, gradient_checkpointing: false}',
  // The config trains on verl; on a CPU the trainer worker runs the same stage.
  'stages.rl.with.trainer=worker',
  `stages.rl.with.tools=${TOOLS}`,
  'stages.rl.with.steps=1',
  'stages.rl.with.batch_size=2',
  'stages.rl.with.group_size=2',
  // The teacher's limits: they are part of the prompt the policy was fine-tuned on.
  'stages.rl.with.max_turns=8',
  'stages.rl.with.step_timeout=300',
  'stages.rl.with.temperature=0.2',
  'stages.rl.with.lr=0.00001',
  'stages.rl.with.seed=0',
  // The base model writes the solution summaries: any worker entry can, a random one writes noise.
  'stages.rl.with.shaping={kind: spice, scorer: worker, summarizer: qwen3_8b, pilot_steps: 1, references: 2, max_length: 8192}',
].flatMap((o) => ['-S', o]);

const FILE = 'table3-rl.yaml';
const outputs = async (dir: string, node: string) =>
  (await cli(['outputs', FILE, node, ...CPU], { cwd: dir })).stdout.trim();

type Recorded = Awaited<ReturnType<typeof readJsonl>>[number];

/**
 * The checks on one GRPO episode of the chain: its prompt is the SFT prompt, each tool call a scored turn, its
 * turn rewards the shaping plus the outcome. Returns how many calls it made and how many of them were scored.
 */
function checkShapedEpisode(t: Recorded, kept: Recorded[], beta: number): { calls: number; scored: number } {
  let scored = 0;
  assert.not.ok(t.crashed, JSON.stringify(t).slice(0, 300));
  // The policy is prompted exactly as it was fine-tuned: a one-demonstration imitation is pushed off its
  // track by any changed token (the limits line, say), and then whether it recovers depends on the
  // processor's floating-point kernels.
  const demo = kept.find((d) => d.task_id === t.task_id);
  if (demo) assert.is(t.messages[0].content, demo.messages[0].content, 'the GRPO prompt is the SFT prompt');
  // The fine-tuned policy acts: its replies are parsed into mlab actions, and each is a scored turn.
  const found = toolCalls(t);
  const turns = t.shaping.turns as TurnShaping[];
  assert.equal(
    turns.map((x) => x.turn),
    found.map((x) => x.turn),
    'one score per tool-call turn',
  );
  for (const x of turns) {
    if (x.d === null) assert.is(x.shaping, 0);
    else {
      scored++;
      assert.ok(Math.abs(x.shaping - beta * x.d) < 1e-9);
    }
  }
  // Every sampled turn carries the worker's token ids: the calls were scored on exactly those.
  assert.ok(t.turns.every((x: { tokens?: { token_ids: number[] } }) => x.tokens && x.tokens.token_ids.length > 0));
  const expect = t.shaping.rewards.map((_: number, s: number) =>
    turns.filter((x) => x.turn === s).reduce((a, x) => a + x.shaping, 0),
  );
  expect[expect.length - 1] += t.reward;
  t.shaping.rewards.forEach((x: number, s: number) => assert.ok(Math.abs(x - expect[s]) < 1e-9, `reward of turn ${s}`));
  return { calls: found.length, scored };
}

test('collection → SFT → GRPO with SPICE on a tiny model: its calls are scored per turn, the metrics reach a table and a figure', async () => {
  const dir = await tmpProject({});
  for (const f of ['guided-sft.yaml', FILE]) await copyFile(join(ROOT, 'experiments', 'mltoolbench', f), join(dir, f));
  const c = await cli(['run', FILE, ...CPU, '--only', 'demos'], { cwd: dir });
  assert.is(c.exitCode, 0, c.stderr);
  const demos = join(await outputs(dir, 'demos'), 'trajectories.jsonl');
  const kept = await readJsonl(demos);
  assert.ok(kept.length >= 1 && kept.every((t) => t.variables.success === 1), 'verified demonstrations to learn from');

  // The model: random weights of Qwen3's architecture, a tokenizer trained on the demonstrations.
  const made = await execa(
    trainerPython(ROOT),
    ['-m', 'mlepipe_worker', 'tiny', join(dir, 'tiny-mlab'), '--corpus', demos, '--vocab', '1024', '--context', '8192'],
    { cwd: join(ROOT, 'gpu', 'worker'), reject: false },
  );
  assert.is(made.exitCode, 0, made.stderr);

  const r = await cli(['run', FILE, ...CPU, '--only', 'rl'], { cwd: dir });
  assert.is(r.exitCode, 0, r.stderr);
  // The collection is the one already run.
  assert.match(r.stderr, /done: 2 ran, 4 cached, 0 failed/);

  const epochs = await readJsonl(join(await outputs(dir, 'sft@model=qwen3_8b'), 'metrics.jsonl'));
  const [first, last] = [epochs[1].train_loss, epochs[epochs.length - 1].train_loss];
  assert.ok(last < first / 10, `SFT loss ${first} → ${last}`);

  const rl = await outputs(dir, 'rl@model=qwen3_8b');
  const cal = JSON.parse(await readFile(join(rl, 'calibration.json'), 'utf8'));
  assert.ok(cal.turns > 0 && cal.in_range, JSON.stringify(cal));
  assert.ok(cal.mean_abs_shaping >= 0.05 && cal.mean_abs_shaping <= 0.3);
  // The demonstrations' summaries are the base model's text, not the procedural ones.
  const bank = JSON.parse(await readFile(join(rl, 'bank.json'), 'utf8')) as Array<{
    task_id: string;
    source: string;
    text: string;
    writer: string;
  }>;
  const seeded = bank.filter((e) => e.source === 'demonstration');
  assert.is(seeded.length, kept.length);
  for (const e of seeded) {
    assert.is(e.writer, 'qwen3_8b', JSON.stringify(e));
    assert.is.not(e.text, summarise(kept.find((t) => t.task_id === e.task_id)));
  }
  const curve = await readJsonl(join(rl, 'metrics.jsonl'));
  assert.equal(
    curve.map((m) => m.step),
    [1],
  );
  let calls = 0;
  let scored = 0;
  for (const k of [1]) {
    for (const t of await readJsonl(join(rl, 'steps', `step_0000${k}.jsonl`))) {
      const seen = checkShapedEpisode(t, kept, cal.beta);
      calls += seen.calls;
      scored += seen.scored;
    }
  }
  // A tiny model imitates its demonstrations only in part: some rollouts act, others write no action.
  assert.ok(calls > 0, 'the fine-tuned policy made tool calls');
  assert.ok(scored > 0);
  assert.is(
    scored,
    curve.reduce((a, m) => a + m.shaping_scored, 0),
  );
  // The worker took the update with turn-level advantages, and the checkpoint after it is the node's.
  for (const m of curve) assert.type(m.loss, 'number');
  assert.ok(await readFile(join(rl, 'checkpoint', 'mlepipe-worker.json'), 'utf8'));
  // The config's training table (one row per step, the backbone in front) and its figure.
  assert.match(
    r.stdout,
    /training\nvariant\s+step\s+lr\s+reward_mean\s+shaping_scored\s+shaping_mean_abs\s+score_abs_diagnostic\s+score_abs_execution\s+bank_size\nmodel=qwen3_8b\s+1\s/,
  );
  assert.match(r.stderr, /figure shaping: reports\/mltoolbench-table3-rl\/shaping\.svg/);
  assert.match(await readFile(join(dir, 'reports', 'mltoolbench-table3-rl', 'shaping.svg'), 'utf8'), /<svg/);
});

test.run();
