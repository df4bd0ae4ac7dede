// The Python environment in node keys: nodes that run Python follow it, others do not.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PythonIdentity } from '../../core/python-identity.js';
import { loadExperiment } from '../config/load.js';
import { compileGraph } from './graph.js';
import { computeKeys } from './keys.js';

const EXP = `name: k
stages:
  tasks: { uses: generate, with: { backend: procedural, seeds: mlebench, count: 2, seed: 0 } }
  verified: { uses: filter, needs: [tasks], with: { val: 0 } }
  fit: { uses: shell, with: { run: $MLEPIPE_PYTHON fit.py } }
  prep: { uses: shell, with: { run: bash prep.sh, deps: [prep.sh] } }
  echo: { uses: shell, with: { run: echo hello } }
`;

async function keysWith(identity: PythonIdentity): Promise<Record<string, string>> {
  const dir = await mkdtemp(join(tmpdir(), 'mlepipe-keys-'));
  await writeFile(join(dir, 'mlepipe.config.yaml'), '{}\n');
  // The script reads the interpreter from the environment itself.
  await writeFile(join(dir, 'prep.sh'), '"$MLEPIPE_PYTHON" -c "print(1)"\n');
  await writeFile(join(dir, 'e.yaml'), EXP);
  const exp = await loadExperiment(join(dir, 'e.yaml'), { env: {} });
  const g = await computeKeys(exp, compileGraph(exp), { python: async () => identity });
  return Object.fromEntries([...g.nodes].map(([id, n]) => [id, n.key]));
}

const LOCK_A = { lock: 'a'.repeat(64), python: '3.11' };

test('the same lock keeps every key; a changed lock changes the keys of the nodes that run Python only', async () => {
  const a = await keysWith(LOCK_A);
  assert.equal(await keysWith({ ...LOCK_A }), a);
  const b = await keysWith({ ...LOCK_A, lock: 'b'.repeat(64) });
  for (const id of ['tasks', 'verified', 'fit', 'prep']) assert.is.not(b[id], a[id], id);
  assert.is(b.echo, a.echo);
  // Another major.minor with the same lock is another environment too.
  assert.is.not((await keysWith({ ...LOCK_A, python: '3.12' })).tasks, a.tasks);
});

test('an interpreter named in settings keys by its own identity', async () => {
  const a = await keysWith({ interpreter: '/opt/py/bin/python3', version: '3.11.9', packages: 'c'.repeat(64) });
  const b = await keysWith({ interpreter: '/opt/py/bin/python3', version: '3.11.9', packages: 'd'.repeat(64) });
  assert.is.not(b.tasks, a.tasks);
  assert.is(b.echo, a.echo);
});

async function evalKeys(withLine: string, rewards = ''): Promise<{ key: string; baseKey?: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'mlepipe-keys-'));
  await writeFile(join(dir, 'mlepipe.config.yaml'), '{}\n');
  await writeFile(
    join(dir, 'e.yaml'),
    `name: r\n${rewards}stages:\n  tasks: { uses: generate, with: { backend: procedural, seeds: mlebench, count: 2, seed: 0 } }\n  agents: { uses: eval, needs: [tasks], with: { split: all, policy: scripted:linear, ${withLine} } }\n`,
  );
  const exp = await loadExperiment(join(dir, 'e.yaml'), { env: {} });
  const g = await computeKeys(exp, compileGraph(exp), { python: async () => LOCK_A });
  return g.nodes.get('agents')!;
}

test('base keys: the reward, its inputs and its formula are left out; anything the episodes read is not', async () => {
  const a = await evalKeys('seed: 1, reward: sparse');
  assert.ok(a.baseKey);
  for (const other of ['seed: 1, reward: sandmle-paper', 'seed: 1', 'seed: 1, reward: sparse, format_rule: release']) {
    const b = await evalKeys(other);
    assert.is.not(b.key, a.key, other);
    assert.is(b.baseKey, a.baseKey, other);
  }
  // An experiment's own formula under the same name is another reward, the same work.
  const own = await evalKeys('seed: 1, reward: mine', 'rewards: { mine: "0.5*gold" }\n');
  assert.is(own.baseKey, a.baseKey);
  for (const other of [
    'seed: 2, reward: sparse',
    'seed: 1, reward: sparse, max_turns: 3',
    'seed: 1, reward: sparse, feedback: score',
  ])
    assert.is.not((await evalKeys(other)).baseKey, a.baseKey, other);
});

test.run();
