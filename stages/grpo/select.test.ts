// select: best-val — the rule that picks the step a grpo node hands on, and what validation refuses: no
// validation, a validation step without a checkpoint, verl's own retention. select: last keeps a node's key.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { UserError } from '../../core/errors.js';
import { loadExperiment } from '../../pipelines/config/load.js';
import { resolveGrpo } from './index.js';
import type { CurveRow } from './curve.js';
import { bestValidation, keptStep } from './select.js';

const every = () => true;

test('the highest val_reward among checkpointed validation steps; ties go to the earlier step', () => {
  const curve: CurveRow[] = [
    { step: 0, val_reward: 0.9 },
    { step: 1, reward_mean: 0.1 },
    { step: 2, val_reward: 0.4 },
    { step: 3, val_reward: 0.7 },
    { step: 4, val_reward: 0.7 },
    { step: 5, val_reward: null },
    { step: 6, val_reward: 0.2 },
  ];
  // Step 0 (verl's pass before training) has no checkpoint of the run.
  assert.equal(bestValidation(curve, every), { step: 3, val_reward: 0.7 });
  assert.equal(bestValidation([...curve].reverse(), every), { step: 3, val_reward: 0.7 });
  assert.equal(
    bestValidation(curve, (k) => k % 2 === 0),
    { step: 4, val_reward: 0.7 },
  );
  assert.is(
    bestValidation(curve, (k) => k === 5),
    undefined,
  );
  const kept = keptStep({ steps: 7, checkpoint_every: 3 });
  assert.equal([1, 3, 6, 7].map(kept), [false, true, true, true]);
});

test('select: last is what no select: does, so it leaves the key alone', () => {
  assert.equal(resolveGrpo({ select: 'last' }), resolveGrpo({}));
  assert.is(resolveGrpo({ select: 'best-val' }).select, 'best-val');
});

async function errors(grpo: string): Promise<string[]> {
  const dir = await mkdtemp(join(tmpdir(), 'mlepipe-select-'));
  await writeFile(join(dir, 'mlepipe.config.yaml'), '{}\n');
  const yaml = `name: e
models:
  m: { provider: openai, model: x, base_url: "http://127.0.0.1:1/v1", path: /m }
stages:
  t: { uses: generate, with: { count: 1 } }
  rl:
    uses: grpo
    needs: [t]
    with: { split: all, val_split: all, ${grpo} }
`;
  await writeFile(join(dir, 'e.yaml'), yaml);
  try {
    await loadExperiment(join(dir, 'e.yaml'), { env: {} });
  } catch (err) {
    if (!(err instanceof UserError)) throw err;
    return err.diagnostics.map((d) => `${d.pos?.line}:${d.pos?.col} ${d.path}: ${d.message}`);
  }
  return [];
}

test('validation refuses a best-val it cannot honour, at select:', async () => {
  const at = /^9:\d+ stages\.rl\.with\.select: select: best-val /;
  const none = await errors('steps: 6, select: best-val');
  assert.ok(
    none.some((x) => at.test(x) && /set eval_every/.test(x)),
    none.join('\n'),
  );
  const gap = await errors('steps: 6, eval_every: 2, checkpoint_every: 4, select: best-val');
  assert.ok(
    gap.some((x) => at.test(x) && /step 2 validates \(eval_every: 2\) without one \(checkpoint_every: 4\)/.test(x)),
    gap.join('\n'),
  );
  const verl = await errors('policy: m, trainer: verl-export, steps: 6, eval_every: 2, select: best-val');
  assert.ok(
    verl.some((x) => at.test(x) && /write keep_checkpoints: 0/.test(x)),
    verl.join('\n'),
  );
  // Validation every 4 steps of checkpoints every 2, and a last step (5) that is both: fine; likewise on verl
  // with every checkpoint kept.
  assert.equal(await errors('steps: 5, eval_every: 4, checkpoint_every: 2, select: best-val'), []);
  assert.equal(
    await errors('policy: m, trainer: verl-export, steps: 6, eval_every: 2, keep_checkpoints: 0, select: best-val'),
    [],
  );
});

test.run();
