// The verl estimator `mlepipe_turn` (mlepipe_verl/turn_credit.py) gives, on its test case, the per-turn
// advantages that mlepipe's own trainer computes (agents/shaping/returns.ts) from the same outcomes, turn
// shaping and masks: one formula, two engines.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { shapedAdvantages, shapedRewards } from '../../agents/shaping/returns.js';
import { spiceScore } from '../../agents/shaping/spice.js';
import { tipsPotential } from '../../agents/shaping/tips.js';
import type { TurnScore } from '../../agents/shaping/types.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const python = join(root, '.venv', 'verl', 'bin', 'python');

type Member = { uid: string; outcome: number; shaping: (number | null)[]; masked: boolean };

test('the verl estimator and the worker path agree turn by turn on three-turn groups with a masked member', async () => {
  assert.ok(existsSync(python), `${python} is missing: run 'bash scripts/setup-python.sh verl'`);
  const run = await execa(python, ['test_turn_credit.py', 'case'], {
    cwd: join(root, 'gpu', 'verl', 'tests'),
    reject: false,
    all: true,
  });
  assert.is(run.exitCode, 0, run.all);
  const { case: members, advantages } = JSON.parse(run.stdout.trim().split('\n').pop()!) as {
    case: Member[];
    advantages: number[][];
  };
  const groups = new Map<string, number[]>();
  members.forEach((m, i) => groups.set(m.uid, [...(groups.get(m.uid) ?? []), i]));
  const ours: number[][] = new Array<number[]>(members.length);
  for (const idx of groups.values()) {
    // β·d arrives already scaled: β = 1 here.
    const group = idx.map((i) => ({
      rewards: shapedRewards(
        members[i].outcome,
        3,
        members[i].shaping.map((d, turn): TurnScore => ({ turn, d, category: 'execution' })),
        1,
      ),
      masked: members[i].masked,
    }));
    shapedAdvantages(group).advantages.forEach((a, k) => (ours[idx[k]] = a.map((x) => Math.round(x * 1e6) / 1e6)));
  }
  assert.equal(advantages, ours);
  // Not all zero: the case carries signal.
  assert.ok(advantages.flat().some((x) => x !== 0));
});

test("the agent loop's d (turn_scores.spice_d) and TIPS potential are spiceScore's and tipsPotential's on the same log-probabilities", async () => {
  const plain = [-1.25, -0.5, -2];
  const conditioned = [
    [-1, -0.25, -1.5],
    [-1.5, -0.5, -0.75],
  ];
  const code = `import json, sys\nsys.path.insert(0, '.')\nfrom mlepipe_verl.turn_scores import spice_d\nprint(json.dumps(spice_d(${JSON.stringify(conditioned)}, ${JSON.stringify(plain)})))`;
  const run = await execa(python, ['-c', code], { cwd: join(root, 'gpu', 'verl'), reject: false, all: true });
  assert.is(run.exitCode, 0, run.all);
  const d = Number(run.stdout.trim().split('\n').pop());
  assert.ok(Math.abs(d - spiceScore(conditioned, plain)) < 1e-12, `${d} vs ${spiceScore(conditioned, plain)}`);
  assert.ok(Math.abs(d) > 0.1);
  const tips = await execa(
    python,
    [
      '-c',
      `import sys\nsys.path.insert(0, '.')\nfrom mlepipe_verl.turn_scores import tips_potential\nprint(tips_potential(${JSON.stringify(conditioned)}))`,
    ],
    { cwd: join(root, 'gpu', 'verl'), reject: false, all: true },
  );
  assert.is(tips.exitCode, 0, tips.all);
  assert.ok(Math.abs(Number(tips.stdout.trim()) - tipsPotential(conditioned)) < 1e-12);
});

test.run();
