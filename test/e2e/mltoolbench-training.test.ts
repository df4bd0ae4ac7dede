// Every MLToolBench config that trains (an sft or grpo stage) runs the paper's
// chain on the suite: its tasks come from mltoolbench nodes covering train,
// ID and OOD; SFT reads D.1-curated demonstrations, guided wherever the
// teacher had the diagnostics; every shaped RL node has a summarizer writing
// its references; and every trained checkpoint is evaluated, as a policy, on
// the ID and on the OOD instances. Read from the compiled graph (after
// extends and ablations), and from `mlepipe plan --json` for the kinds.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { cp, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { loadExperiment } from '../../pipelines/config/load.js';
import { compileGraph, type GraphNode } from '../../pipelines/compile/graph.js';
import type { Experiment } from '../../pipelines/config/types.js';
import { cli, ROOT, tmpProject } from '../helpers.js';

const TRAINING = [
  'guided-sft.yaml',
  'table3-rl.yaml',
  'fig7-rl.yaml',
  'table4-controls.yaml',
  'fig4-feedback.yaml',
  'fig6-sft.yaml',
  'spice-suite.yaml',
];

async function project(): Promise<string> {
  // A folder of its own below the project's settings file, which is no experiment.
  const dir = join(await tmpProject({}), 'mltoolbench');
  await cp(join(ROOT, 'experiments', 'mltoolbench'), dir, {
    recursive: true,
    filter: (src) => !src.includes('/reports') && !src.endsWith('.lock.json'),
  });
  return dir;
}

interface Loaded {
  exp: Experiment;
  nodes: GraphNode[];
}

const load = async (dir: string, f: string): Promise<Loaded> => {
  const exp = await loadExperiment(join(dir, f), { env: {} });
  return { exp, nodes: [...compileGraph(exp).nodes.values()] };
};

const kind = (n: GraphNode) => n.stage.uses;
const param = (n: GraphNode, path: string): unknown =>
  path.split('.').reduce<unknown>((v, k) => (v as Record<string, unknown> | undefined)?.[k], n.params);

/** The policies an eval node runs: its policy: or policies:. */
const policiesOf = (n: GraphNode) => [
  ...((param(n, 'policies') as string[] | undefined) ?? []),
  ...(param(n, 'policy') ? [param(n, 'policy') as string] : []),
];

/** Whether an eval node runs the checkpoint of `trained` (a models: entry serving it, or the template policy a grpo node trained). */
function runsCheckpoint({ exp }: Loaded, ev: GraphNode, trained: GraphNode): boolean {
  return policiesOf(ev).some(
    (p) =>
      (p === 'template' && kind(trained) === 'grpo') ||
      (exp.models[p] as { checkpoint?: string } | undefined)?.checkpoint === trained.stage.id,
  );
}

test('every MLToolBench config that trains is found and plans mltoolbench task nodes, and nothing generated', async () => {
  const dir = await project();
  const files = (await readdir(dir)).filter((f) => f.endsWith('.yaml')).sort();
  const training: string[] = [];
  for (const f of files)
    if ((await load(dir, f)).nodes.some((n) => kind(n) === 'sft' || kind(n) === 'grpo')) training.push(f);
  assert.equal(training, [...TRAINING].sort());
  const v = await cli(['validate', ...files], { cwd: dir });
  assert.is(v.exitCode, 0, v.stderr + v.stdout);
  for (const f of training) {
    const p = await cli(['plan', f, '--json'], { cwd: dir });
    assert.is(p.exitCode, 0, `${f}: ${p.stderr}`);
    const kinds = (JSON.parse(p.stdout).nodes as Array<{ kind: string }>).map((n) => n.kind);
    assert.ok(kinds.includes('mltoolbench'), `${f} plans no mltoolbench node`);
    for (const k of ['generate', 'filter']) assert.not.ok(kinds.includes(k), `${f} plans a ${k} node`);
  }
});

test('train, ID and OOD from the suite; SFT on curated, guided demonstrations; summaries for every shaped RL node; every checkpoint on ID and OOD', async () => {
  const dir = await project();
  for (const f of TRAINING) {
    const l = await load(dir, f);
    const byId = new Map(l.nodes.map((n) => [n.id, n]));
    const inputs = (n: GraphNode) => n.inputs.map((i) => byId.get(i)!);
    const suiteSplit = (n: GraphNode) =>
      inputs(n)
        .filter((i) => kind(i) === 'mltoolbench')
        .map((i) => param(i, 'split'));
    const splits = new Set(l.nodes.filter((n) => kind(n) === 'mltoolbench').map((n) => param(n, 'split')));
    for (const s of ['train', 'id', 'ood']) assert.ok(splits.has(s), `${f}: no mltoolbench ${s} split`);

    // Demonstrations: teacher runs on the training split, curated by D.1; with diagnostics offered, guided.
    let guided = 0;
    for (const sft of l.nodes.filter((n) => kind(n) === 'sft')) {
      const curated = inputs(sft).filter((i) => kind(i) === 'curate');
      assert.ok(curated.length > 0, `${f}: ${sft.id} does not read a curate node`);
      for (const collect of curated.flatMap(inputs)) {
        assert.is(kind(collect), 'eval', `${f}: ${sft.id}'s curation reads ${collect.id}`);
        assert.equal(suiteSplit(collect), ['train'], `${f}: ${collect.id} collects on the training instances`);
        if (param(collect, 'tools') === 'none') continue;
        const g = param(collect, 'guidance');
        const hints = inputs(collect).filter((i) => kind(i) === 'guide' && (g === true || g === i.stage.id));
        assert.ok(
          g && hints.length === 1,
          `${f}: ${collect.id} offers the diagnostics without guidance from a guide node`,
        );
        guided++;
      }
    }
    const sfts = l.nodes.filter((n) => kind(n) === 'sft').length;
    if (sfts) assert.ok(guided > 0, `${f}: no SFT on guided demonstrations`);

    for (const rl of l.nodes.filter((n) => kind(n) === 'grpo')) {
      assert.equal(suiteSplit(rl), ['train'], `${f}: ${rl.id} trains on the training instances`);
      // The paper-size RL runs on verl; a frozen scorer beside the policy (Fig. 4) and the CPU suite's template policy need the worker or the template.
      const frozen = param(rl, 'shaping.kind') !== 'none' && param(rl, 'shaping.scorer') !== 'worker';
      const engine = f === 'spice-suite.yaml' ? 'template' : frozen ? 'worker' : 'verl';
      assert.is(param(rl, 'trainer'), engine, `${f}: ${rl.id} trainer`);
      // On the worker a backbone's full fine-tuning cannot fit one H200 (gpu/worker/mlepipe_worker/memory.py; 8B at r = 64 fits): LoRA there.
      const policy = l.exp.models[param(rl, 'policy') as string] as { lora_rank?: number } | undefined;
      if (engine === 'worker')
        assert.ok((policy?.lora_rank ?? 0) > 0, `${f}: ${rl.id} fine-tunes every parameter on the worker`);
      if (engine === 'verl')
        assert.equal(
          [
            param(rl, 'verl.nodes'),
            param(rl, 'verl.gpus_per_node'),
            param(rl, 'val_split'),
            param(rl, 'verl.mini_batch_size'),
          ],
          [1, 8, 'all', (param(rl, 'batch_size') as number) * (param(rl, 'group_size') as number)],
          `${f}: ${rl.id} verl layout`,
        );
      if (param(rl, 'shaping.kind') !== 'none') {
        const writer = param(rl, 'shaping.summarizer') as string | undefined;
        assert.ok(writer && l.exp.models[writer], `${f}: ${rl.id} (${param(rl, 'shaping.kind')}) has no summarizer`);
        assert.ok(
          inputs(rl).some((i) => kind(i) === 'curate'),
          `${f}: ${rl.id}'s bank is not the curated demonstrations`,
        );
      }
    }

    // Every trained checkpoint is run as a policy on ID and on OOD; Fig. 4's one scoring step (β = 0) trains nothing anyone uses.
    for (const trained of l.nodes.filter((n) => kind(n) === 'sft' || kind(n) === 'grpo')) {
      if (kind(trained) === 'grpo' && param(trained, 'steps') === 1 && param(trained, 'shaping.beta') === 0) continue;
      const evals = l.nodes.filter(
        (n) => kind(n) === 'eval' && n.inputs.includes(trained.id) && runsCheckpoint(l, n, trained),
      );
      const evaluated = new Set(evals.flatMap(suiteSplit));
      for (const s of ['id', 'ood']) assert.ok(evaluated.has(s), `${f}: ${trained.id} is not evaluated on ${s}`);
    }
  }
});

test('the arms the paper compares are nodes: both backbones, the three rewards, the controls, β ranges, Original and Tables 5 and 6 after RL', async () => {
  const dir = await project();
  const ids = async (f: string) => (await load(dir, f)).nodes.map((n) => n.id);
  const t3 = await ids('table3-rl.yaml');
  for (const b of ['qwen3_8b', 'qwen35'])
    for (const s of ['id_rl', 'ood_rl', 'id_rl_original', 'ood_rl_original'])
      assert.ok(t3.includes(`${s}@model=${b}`), `table3-rl: ${s}@model=${b}`);
  const f7 = await ids('fig7-rl.yaml');
  for (const b of ['qwen3_8b', 'qwen35']) {
    for (const k of ['none', 'tips', 'spice']) {
      for (const s of ['rl', 'id_rl', 'ood_rl', 'id_rl_original', 'ood_rl_original'])
        assert.ok(f7.includes(`${s}@model=${b},shaping.kind=${k}`), `fig7-rl: ${s} ${b} ${k}`);
      for (const m of ['none', 'mask', 'paraphrase'])
        assert.ok(f7.includes(`arms@model=${b},shaping.kind=${k},intervention.mode=${m}`));
    }
  }
  const t4 = await ids('table4-controls.yaml');
  for (const b of ['qwen3_8b', 'qwen35']) {
    for (const s of ['rl', 'rl_outcome', 'rl_reduced', 'rl_shuffled', 'rl_dropout', 'id_controls', 'ood_controls'])
      assert.ok(t4.includes(`${s}@model=${b}`), `table4-controls: ${s}@model=${b}`);
    for (const k of ['[0.001,0.05]', '[0.3,1]'])
      for (const s of ['rl_beta', 'id_beta', 'ood_beta'])
        assert.ok(t4.includes(`${s}@model=${b},shaping.kappa=${k}`), `table4-controls: ${s} ${k}`);
  }
  const f6 = await ids('fig6-sft.yaml');
  for (const b of ['qwen3_8b', 'qwen35'])
    for (const s of ['sft', 'sft_plain', 'id_plain', 'ood_plain', 'id_plain_original', 'id_sft_original'])
      assert.ok(f6.includes(`${s}@model=${b}`), `fig6-sft: ${s}@model=${b}`);
});

test("Fig. 4: the paper's arms score with three frozen, task-unadapted scorers; the SFT scorer is an extra arm with a table of its own", async () => {
  const l = await load(await project(), 'fig4-feedback.yaml');
  const scorerOf = (n: GraphNode) => param(n, 'shaping.scorer') as string;
  // Unadapted: weights from a path, not a checkpoint any node of the file trained.
  const adapted = (n: GraphNode) => (l.exp.models[scorerOf(n)] as { checkpoint?: string }).checkpoint !== undefined;
  const rl = l.nodes.filter((n) => n.stage.id === 'rl');
  assert.equal(new Set(rl.map(scorerOf)).size, 3);
  assert.equal(new Set(rl.map((n) => param(n, 'shaping.kind'))), new Set(['tips', 'spice']));
  for (const n of rl) assert.not.ok(adapted(n), `${n.id} scores with a task-adapted model`);
  const tables = l.exp.tables as Record<string, { from: string; reference?: unknown; description?: string }>;
  assert.is(tables.fig4.from, 'rl');
  // Every other scoring node is outside the paper's table, in one that says so and prints no paper numbers beside it.
  for (const n of l.nodes.filter((x) => kind(x) === 'grpo' && x.stage.id !== 'rl')) {
    const t = Object.values(tables).find((x) => x.from === n.stage.id);
    assert.ok(t && !t.reference && /beyond the paper/i.test(t.description ?? ''), `${n.id} is not labelled as extra`);
  }
  assert.ok(
    l.nodes.some((n) => kind(n) === 'grpo' && adapted(n)),
    'the SFT-scorer arm is kept',
  );
});

test('the configs share their common nodes in the cache: one SFT per backbone, one SPICE run, one outcome-only run', async () => {
  const dir = await project();
  const keys = async (f: string) => {
    const p = await cli(['plan', f, '--json'], { cwd: dir });
    assert.is(p.exitCode, 0, p.stderr);
    return new Map((JSON.parse(p.stdout).nodes as Array<{ id: string; key: string }>).map((n) => [n.id, n.key]));
  };
  const [sft, t3, f7, t4, f6] = await Promise.all(
    ['guided-sft.yaml', 'table3-rl.yaml', 'fig7-rl.yaml', 'table4-controls.yaml', 'fig6-sft.yaml'].map(keys),
  );
  for (const b of ['qwen3_8b', 'qwen35']) {
    for (const other of [t3, f7, t4, f6])
      assert.is(other.get(`sft@model=${b}`), sft.get(`sft@model=${b}`), `sft@model=${b}`);
    assert.ok(t3.get(`rl@model=${b}`));
    assert.is(f7.get(`rl@model=${b},shaping.kind=spice`), t3.get(`rl@model=${b}`));
    assert.is(t4.get(`rl@model=${b}`), t3.get(`rl@model=${b}`));
    assert.is(t4.get(`rl_outcome@model=${b}`), f7.get(`rl@model=${b},shaping.kind=none`));
  }
});

test('the RL configs train on verl and stay runnable on the worker; without val_split: all verl has nothing to validate on', async () => {
  const dir = await project();
  const r = await cli(['validate', 'table3-rl.yaml', '-S', 'stages.rl.with.shaping={kind: none}'], { cwd: dir });
  assert.is(r.exitCode, 0, r.stderr + r.stdout);
  const worker = await cli(['validate', 'table3-rl.yaml', '-S', 'stages.rl.with.trainer=worker'], { cwd: dir });
  assert.is(worker.exitCode, 0, worker.stderr + worker.stdout);
  // Table 3's minibatch of 128 is more than its 8 × 8 rollouts: verl would refuse it, and so does the check, at its place.
  const t3 = await cli(['validate', 'table3-rl.yaml', '-S', 'stages.rl.with.verl.mini_batch_size=128'], { cwd: dir });
  assert.is(t3.exitCode, 2, t3.stderr + t3.stdout);
  assert.match(
    t3.stderr,
    /stages\.rl\.with\.verl\.mini_batch_size: mini_batch_size \(128 trajectories\) is more than a step rolls out/,
  );
  // verl validates as it trains: on the training instances, since the suite's train split has no val part.
  const noVal = await cli(['validate', 'table3-rl.yaml', '-S', 'stages.rl.with.val_split=val'], { cwd: dir });
  assert.is(noVal.exitCode, 2, noVal.stderr + noVal.stdout);
  assert.match(
    noVal.stderr,
    /table3-rl\.yaml:\d+:\d+: stages\.rl\.needs: grpo reads a train\/val split from its inputs/,
  );
});

test.run();
