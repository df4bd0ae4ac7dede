import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { UserError } from '../../core/errors.js';
import { loadExperiment } from '../config/load.js';
import { compileGraph } from './graph.js';
import { computeKeys } from './keys.js';

async function load(yaml: string, overrides: string[] = []) {
  const dir = await mkdtemp(join(tmpdir(), 'mlepipe-graph-'));
  await writeFile(join(dir, 'mlepipe.config.yaml'), '{}\n');
  await writeFile(join(dir, 'e.yaml'), yaml);
  return loadExperiment(join(dir, 'e.yaml'), { overrides, env: {} });
}

const PIPE = `name: g
stages:
  envs: { uses: shell, with: { run: a } }
  rl:   { uses: shell, needs: [envs], with: { run: b, params: { reward: dense, lr: 1 } } }
  test: { uses: shell, needs: [rl], with: { run: c } }
  side: { uses: shell, needs: [envs], with: { run: d } }
  rewards: { uses: ablate, target: rl, matrix: { params.reward: [dense, sparse] } }
`;

test('ablate clones the target and everything downstream; upstream stays shared', async () => {
  const g = compileGraph(await load(PIPE));
  assert.equal(
    [...g.order],
    [
      'envs',
      'rl@params.reward=dense',
      'rl@params.reward=sparse',
      'test@params.reward=dense',
      'test@params.reward=sparse',
      'side',
      'rewards',
    ],
  );
  const sparse = g.nodes.get('rl@params.reward=sparse')!;
  assert.equal(sparse.inputs, ['envs']);
  assert.equal((sparse.params.params as Record<string, unknown>).reward, 'sparse');
  assert.equal(g.nodes.get('test@params.reward=sparse')!.inputs, ['rl@params.reward=sparse']);
  assert.equal([...g.nodes.get('rewards')!.inputs].sort(), [
    'rl@params.reward=dense',
    'rl@params.reward=sparse',
    'test@params.reward=dense',
    'test@params.reward=sparse',
  ]);
});

test('two ablations multiply; matrix combinations in written order', async () => {
  const g = compileGraph(
    await load(
      PIPE +
        '  seeds: { uses: ablate, target: envs, matrix: { params.seed: [1, 2] } }\n  lrs: { uses: ablate, target: rl, matrix: { params.lr: [1, 2] } }\n'.replace(
          /params\.seed/,
          'params.seed',
        ),
    ),
  ).order;
  // envs has no params.seed in with:, but params is free-form, so the key is allowed.
  assert.ok(g.includes('test@params.seed=2,params.reward=sparse,params.lr=2'));
  assert.is(g.filter((id) => id.startsWith('test@')).length, 8);
  assert.is(g.filter((id) => id.startsWith('envs@')).length, 2);
});

test('keys: stable, changed by params downstream only, shared by identical clones', async () => {
  const a = await computeKeys(await load(PIPE), compileGraph(await load(PIPE)));
  const b = await computeKeys(await load(PIPE), compileGraph(await load(PIPE)));
  assert.equal(
    [...a.nodes.values()].map((n) => n.key),
    [...b.nodes.values()].map((n) => n.key),
  );
  const changed = await load(PIPE, ['stages.test.with.run=cc']);
  const c = await computeKeys(changed, compileGraph(changed));
  for (const id of a.order) {
    const same = a.nodes.get(id)!.key === c.nodes.get(id)!.key;
    assert.is(same, !id.startsWith('test@') && id !== 'rewards', id);
  }
  // Without the ablation, rl has the params of rl@params.reward=dense: same key, cached once.
  const plain = await load(
    PIPE.split('\n')
      .filter((l) => !l.includes('ablate'))
      .join('\n'),
  );
  const p = await computeKeys(plain, compileGraph(plain));
  assert.is(p.nodes.get('rl')!.key, a.nodes.get('rl@params.reward=dense')!.key);
});

test('order is deterministic and respects needs', async () => {
  const exp = await load(`name: o
stages:
  d: { uses: shell, needs: [b, c], with: { run: x } }
  c: { uses: shell, needs: [a], with: { run: x } }
  b: { uses: shell, needs: [a], with: { run: x } }
  a: { uses: shell, with: { run: x } }
`);
  assert.equal([...compileGraph(exp).order], ['a', 'c', 'b', 'd']);
});

test('two ablations that give the same node id are refused at the second matrix', async () => {
  const exp = await load(`name: g
stages:
  fit: { uses: shell, with: { run: a, params: { k: 0 } } }
  one: { uses: ablate, target: fit, matrix: { params.k: [1, 2] } }
  two: { uses: ablate, target: fit, matrix: { params.k: [1, 3] } }
`);
  try {
    compileGraph(exp);
    assert.unreachable('should fail');
  } catch (err) {
    assert.instance(err, UserError);
    const d = (err as UserError).diagnostics[0];
    assert.equal([d.pos?.line, d.pos?.col, d.path], [5, 37, 'stages.two.matrix']);
    assert.match(d.message, 'ablation two produces two nodes named fit@params.k=1');
  }
});

test.run();
