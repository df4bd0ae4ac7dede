// What the stage kinds declare they need before a node runs (Stage.preflight): the paths their params
// name, the environments and GPUs a verl job takes here, the cluster it goes to instead, the models.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resolveModel } from '../../core/models.js';
import type { Need, PreflightContext } from '../contract.js';
import { grpoNeeds, type GrpoParams } from '../grpo/index.js';
import { mlebench } from '../mlebench/index.js';
import { mltoolbench, type MltoolbenchParams } from '../mltoolbench/index.js';
import { sft, type SftParams } from '../sft/index.js';
import { shell, type ShellParams } from '../shell/index.js';
import { localGpus, verlNeeds } from './verl-needs.js';

const models = {
  base: resolveModel({ provider: 'worker', model: 'q', path: '/models/q' }),
  api: resolveModel({ provider: 'openai', model: 'q', base_url: 'http://127.0.0.1:1/v1' }),
};
const ctx = (over: Partial<PreflightContext> = {}): PreflightContext => ({
  experimentDir: '/exp',
  models,
  rewards: {},
  placed: false,
  ...over,
});
const cluster = { device: 'cuda' as const, nodes: 1, gpus_per_node: 8 };
const policy = { name: 'base', param: ['policy'] };
const kinds = (needs: Need[]) => needs.map((n) => Object.keys(n).find((k) => !['what', 'param', 'why'].includes(k)));

test('mlebench: the checkout, the data folder, and each competition’s prepared data and grader files', () => {
  const needs = mlebench.preflight!({ data: 'data', mlebench: 'code', set: ['a', 'b'], keep_going: false }, ctx());
  const paths = needs.map((n) => ('path' in n ? n.path : ''));
  assert.equal(paths.slice(0, 2), ['/exp/code', '/exp/data']);
  assert.ok(paths.includes('/exp/data/b/prepared/private'));
  assert.ok(paths.includes('/exp/code/mlebench/competitions/a/leaderboard.csv'));
  assert.is(needs.length, 2 + 2 * 4);
  assert.equal(needs[1].param, ['data']);
});

test('mlebench: a checkout given as its package folder is looked at from its root, as the node does', () => {
  const root = mkdtempSync(join(tmpdir(), 'mlepipe-mlebench-'));
  mkdirSync(join(root, 'mlebench', 'competitions'), { recursive: true });
  const needs = mlebench.preflight!(
    { data: 'd', mlebench: join(root, 'mlebench'), set: ['a'], keep_going: false },
    ctx(),
  );
  assert.is((needs[0] as { path: string }).path, root);
  assert.ok(needs.some((n) => 'path' in n && n.path === join(root, 'mlebench', 'competitions', 'a', 'grade.py')));
});

test('mltoolbench: an import needs its manifest and instances; the built-in suite needs nothing', () => {
  const p = { split: 'id', runs: 1, concurrency: 1 } as MltoolbenchParams;
  assert.equal(mltoolbench.preflight!(p, ctx()), []);
  const imported = mltoolbench.preflight!({ ...p, manifest: 'm.json', data: 'inst' }, ctx());
  assert.equal(
    imported.map((n) => [('path' in n && n.path) || '', n.param]),
    [
      ['m.json', ['manifest']],
      ['inst', ['data']],
    ],
  );
});

test('shell: each dependency at its index', () => {
  const p = { run: 'x', deps: ['a.py', 'b/'], outs: [], env: {}, params: {} } as ShellParams;
  assert.equal(
    shell.preflight!(p, ctx()).map((n) => n.param),
    [
      ['deps', 0],
      ['deps', 1],
    ],
  );
});

test('verl with a head here: .venv/verl, the weights from this disk, and the GPUs it asks for', () => {
  const needs = verlNeeds(cluster, ctx(), policy, () => 2);
  assert.equal(kinds(needs), ['env', 'model', 'lacking']);
  assert.is((needs[1] as { use: string }).use, 'weights');
  assert.match((needs[2] as { lacking: string }).lacking, /1 × 8 for a Ray head on this machine, which shows 2/);
  assert.equal(needs[2].param, ['verl', 'gpus_per_node']);
  // Enough GPUs, or a CPU run: no GPU need.
  assert.equal(kinds(verlNeeds(cluster, ctx(), policy, () => 8)), ['env', 'model']);
  assert.equal(kinds(verlNeeds({ ...cluster, device: 'cpu' }, ctx(), policy, () => 0)), ['env', 'model']);
  // Several nodes never fit one machine.
  const two = verlNeeds({ ...cluster, nodes: 2, gpus_per_node: 1 }, ctx(), policy, () => 8);
  assert.equal(two[2].param, ['verl', 'nodes']);
});

test('verl on a cluster: the cluster must answer; the weights are on its disks', () => {
  const own = verlNeeds({ ...cluster, ray_address: 'http://head:8265' }, ctx(), policy, () => 0);
  assert.equal(kinds(own), ['url', 'model']);
  assert.equal(own[0].param, ['verl', 'ray_address']);
  assert.is((own[1] as { use: string }).use, 'elsewhere');
  const settings = verlNeeds(cluster, ctx({ ray: { address: 'http://head:8265' } }), policy, () => 0);
  assert.is((settings[0] as { url: string }).url, 'http://head:8265');
  assert.is(settings[0].param, undefined);
});

test('grpo: the policy as each trainer uses it, and the scorer and summarizer of shaping', () => {
  const p = {
    policy: 'base',
    trainer: 'worker',
    verl: { ...cluster },
    shaping: { kind: 'none', scorer: 'worker' },
  } as unknown as GrpoParams;
  const uses = (q: Partial<GrpoParams>) =>
    grpoNeeds({ ...p, ...q } as GrpoParams, ctx()).flatMap((n) => ('model' in n ? [`${n.model}:${n.use}`] : []));
  assert.equal(uses({}), ['base:endpoint']);
  assert.equal(uses({ trainer: 'template', policy: 'template' }), []);
  assert.equal(uses({ trainer: 'verl-export' }), ['base:elsewhere']);
  assert.equal(uses({ trainer: 'verl' }), ['base:weights']);
  // A running worker serves a worker entry: only its URL is asked.
  const running = grpoNeeds({ ...p, worker_url: 'http://gpu:8000' }, ctx());
  assert.equal(kinds(running), ['url', 'model']);
  assert.is((running[1] as { use: string }).use, 'elsewhere');
  const shaping = { kind: 'spice', scorer: 'api', summarizer: 'api' } as GrpoParams['shaping'];
  assert.equal(uses({ shaping }), ['base:endpoint', 'api:endpoint', 'api:endpoint']);
});

test('sft: verl needs as grpo; a data file at its param; the worker trainer leaves its model to the engine', () => {
  const p = { model: 'base', trainer: 'worker', verl: { ...cluster, device: 'cpu' } } as unknown as SftParams;
  assert.equal(sft.preflight!(p, ctx()), []);
  const verl = sft.preflight!({ ...p, trainer: 'verl', data: 'chat.jsonl' }, ctx());
  assert.equal(kinds(verl), ['env', 'model', 'path']);
  assert.equal(verl[1].param, ['model']);
});

test('localGpus counts the driver’s device files only', () => {
  const dev = mkdtempSync(join(tmpdir(), 'mlepipe-dev-'));
  for (const f of ['nvidia0', 'nvidia1', 'nvidiactl', 'nvidia-uvm']) writeFileSync(join(dev, f), '');
  assert.is(localGpus(dev), 2);
  assert.is(localGpus(join(dev, 'none')), 0);
});

test.run();
