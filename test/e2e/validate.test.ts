// `validate` through the built CLI refuses, at FILE:LINE:COL, everything that
// `plan` or `run` would refuse later, and reports every problem in one pass.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { cp, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { cli, ROOT, tmpProject } from '../helpers.js';

interface Case {
  name: string;
  yaml: string;
  expect: RegExp[];
}

const CASES: Case[] = [
  {
    name: 'an out that leaves the experiment folder',
    yaml: 'name: e\nstages:\n  a: { uses: shell, with: { run: "mkdir -p ../../x && touch ../../x/f", outs: ["../../x"] } }\n',
    expect: [/^e\.yaml:3:80: stages\.a\.with\.outs\[0\]: \.\.\/\.\.\/x leaves the experiment folder/],
  },
  {
    name: 'a dependency file that does not exist',
    yaml: 'name: e\nstages:\n  a: { uses: shell, with: { run: x, deps: [gone.py] } }\n',
    expect: [/^e\.yaml:3:44: stages\.a\.with\.deps\[0\]: dependency gone\.py does not exist/],
  },
  {
    name: 'an unknown seed set',
    yaml: 'name: e\nstages:\n  g: { uses: generate, with: { seeds: mlebnch, count: 2 } }\n',
    expect: [/^e\.yaml:3:39: stages\.g\.with\.seeds: unknown seed set "mlebnch" \(did you mean "mlebench"\?\)/],
  },
  {
    name: 'a filter fed by a shell stage',
    yaml: 'name: e\nstages:\n  prep: { uses: shell, with: { run: x } }\n  f: { uses: filter, needs: [prep] }\n',
    expect: [/^e\.yaml:4:29: stages\.f\.needs: filter reads tasks from its inputs, but no stage in needs: gives them/],
  },
  {
    name: 'an eval fed by a shell stage',
    yaml: 'name: e\nstages:\n  prep: { uses: shell, with: { run: x } }\n  ev: { uses: eval, needs: [prep], with: { policy: scripted:forest } }\n',
    expect: [/^e\.yaml:4:28: stages\.ev\.needs: eval reads tasks from its inputs, but no stage in needs: gives them/],
  },
  {
    name: 'counts and sample sizes past their limits',
    yaml: 'name: e\nstages:\n  g: { uses: generate, with: { count: 1e9, samples: [50, 1e12] } }\n',
    expect: [
      /^e\.yaml:3:39: stages\.g\.with\.count: must be <= \d+$/,
      /^e\.yaml:3:58: stages\.g\.with\.samples\[1\]: must be <= \d+$/,
    ],
  },
  {
    name: 'an unknown reward variable, with a suggestion',
    yaml: 'name: e\nrewards:\n  r: "0.1*format + exec"\nstages:\n  a: { uses: shell, with: { run: x } }\n',
    expect: [/^e\.yaml:3:20: rewards\.r: unknown variable "exec" \(did you mean "execute"\?\)/],
  },
];

for (const c of CASES) {
  test(`validate refuses ${c.name}`, async () => {
    const dir = await tmpProject({ 'e.yaml': c.yaml });
    const r = await cli(['validate', 'e.yaml'], { cwd: dir });
    assert.is(r.exitCode, 2, r.stderr);
    const lines = r.stderr.trim().split('\n');
    assert.is(lines.length, c.expect.length, r.stderr);
    c.expect.forEach((re, i) => assert.match(lines[i], re));
    assert.not.match(r.stderr, /\n\s+at /, 'no stack trace');
  });
}

test('several independent errors are reported in one run, and run refuses the file the same way before anything runs', async () => {
  const dir = await tmpProject({
    'e.yaml': `name: e
rewards:
  r: "0.1*format + exec"
stages:
  gen: { uses: generate, with: { seeds: mlebnch, count: 1e9 } }
  sh: { uses: shell, with: { run: "touch ran", deps: [missing.txt], outs: [../x] } }
  f: { uses: filter, needs: [sh] }
  bad: { uses: shell, needs: nope, with: { run: x } }
tables:
  t: { from: gn }
`,
  });
  const r = await cli(['validate', 'e.yaml'], { cwd: dir });
  assert.is(r.exitCode, 2);
  const where = r.stderr
    .trim()
    .split('\n')
    .map((l) => l.split(': ')[0]);
  assert.equal(where, [
    'e.yaml:3:20',
    'e.yaml:5:41',
    'e.yaml:5:57',
    'e.yaml:6:55',
    'e.yaml:6:76',
    'e.yaml:7:29',
    'e.yaml:8:30',
    'e.yaml:10:14',
  ]);
  const run = await cli(['run', 'e.yaml'], { cwd: dir });
  assert.is(run.exitCode, 2);
  assert.is(run.stderr, r.stderr);
  assert.not.ok((await readdir(dir)).includes('ran'), 'no node ran');
});

test('run -j past the settings bound is refused before anything runs', async () => {
  const dir = await tmpProject({ 'e.yaml': 'name: e\nstages:\n  a: { uses: shell, with: { run: touch ran } }\n' });
  const r = await cli(['run', 'e.yaml', '-j', '100000'], { cwd: dir });
  assert.is(r.exitCode, 2);
  assert.is(r.stderr.trim(), '-j 100000: must be an integer from 1 to 256');
  assert.not.ok((await readdir(dir)).includes('ran'));
});

test('every shipped experiment validates and plans (weights and endpoints named by variables need not exist)', async () => {
  const dir = await tmpProject({});
  await cp(join(ROOT, 'experiments'), join(dir, 'experiments'), {
    recursive: true,
    filter: (src) => !src.includes('/reports') && !src.endsWith('.lock.json'),
  });
  const files = (await readdir(join(dir, 'experiments'), { recursive: true }))
    .filter((f) => f.endsWith('.yaml'))
    .map((f) => join('experiments', f))
    .sort();
  for (const f of ['table1-seed-sft.yaml', 'table3.yaml', 'table4.yaml'])
    assert.ok(files.includes(join('experiments', 'sandmle', f)), files.join(', '));
  const v = await cli(['validate', ...files], { cwd: dir });
  assert.is(v.exitCode, 0, v.stderr);
  assert.is(
    v.stdout
      .trim()
      .split('\n')
      .filter((l) => / ok \(/.test(l)).length,
    files.length,
    v.stdout,
  );
  for (const f of files) {
    const p = await cli(['plan', f], { cwd: dir });
    assert.is(p.exitCode, 0, `${f}: ${p.stderr}`);
    assert.match(p.stdout, / nodes, \d+ to run, 0 cached/);
  }
});

test('table1 places its sandboxes on GPU hosts: without hosts it validates and plans with a warning at the label and run refuses it before anything runs; -S stages.test.sandbox=null runs them here; with h200 hosts it plans onto them', async () => {
  const copy = (dir: string) =>
    cp(join(ROOT, 'experiments'), join(dir, 'experiments'), {
      recursive: true,
      filter: (src) => !src.includes('/reports') && !src.endsWith('.lock.json'),
    });
  const f = 'experiments/sandmle/table1.yaml';
  const bare = await tmpProject({});
  await copy(bare);
  const v = await cli(['validate', f], { cwd: bare });
  assert.is(v.exitCode, 0, v.stderr);
  assert.match(
    v.stderr,
    /^warning: experiments\/sandmle\/table1\.yaml:\d+:\d+: stages\.test\.sandbox\.on: no host named or labelled "h200"/m,
  );
  const p = await cli(['plan', f, '--json'], { cwd: bare });
  assert.is(p.exitCode, 0, p.stderr);
  const test = JSON.parse(p.stdout).nodes.find((n: { stage: string }) => n.stage === 'test');
  assert.equal(test.sandbox, { on: 'h200', hosts: [] });
  // The preflight names the host with the rest this machine lacks; past it, the label is still refused.
  const pre = await cli(['run', f], { cwd: bare });
  assert.is(pre.exitCode, 3, pre.stderr);
  assert.match(
    pre.stderr,
    /missing: host named or labelled "h200" for this node's sandboxes \(stages\.test\.sandbox\.on, /,
  );
  assert.not.match(pre.stderr, /▶/);
  const r = await cli(['run', f, '--no-preflight'], { cwd: bare });
  assert.is(r.exitCode, 2, r.stderr);
  assert.match(
    r.stderr,
    /table1\.yaml:\d+:\d+: stages\.test\.sandbox\.on: no host named or labelled "h200" to run this node's sandboxes on/,
  );
  // Nothing started: not even the competitions' preparation, which has no data here and would fail.
  assert.not.match(r.stderr + r.stdout, /lite/);
  // The chain's teacher runs on the same hosts (chain.yaml's demos): both run here with their -S.
  const here = await cli(['plan', f, '-S', 'stages.test.sandbox=null', '-S', 'stages.demos.sandbox=null', '--json'], {
    cwd: bare,
  });
  assert.is(here.exitCode, 0, here.stderr);
  assert.not.match(here.stderr, /warning/);
  assert.is(JSON.parse(here.stdout).nodes.find((n: { stage: string }) => n.stage === 'test').sandbox, undefined);
  // Two H200 hosts: the plan names them and what each run holds (MLE-bench's 1 GPU and 36 CPUs).
  const gpu = await tmpProject(
    {},
    'hosts:\n  g1: { docker: "tcp://127.0.0.1:1", gpus: 8, labels: [h200] }\n  g2: { docker: "tcp://127.0.0.1:2", gpus: 8, labels: [h200] }\n',
  );
  await copy(gpu);
  const g = await cli(['plan', f], { cwd: gpu });
  assert.is(g.exitCode, 0, g.stderr);
  assert.not.match(g.stderr, /warning/);
  assert.match(g.stdout, /run +test +no entry +sandboxes on h200 \(g1 or g2; 1 GPU and 36 CPUs a run\)/);
  // A host labelled h200 that lends no GPUs could never hold a run: refused at gpus_per_run.
  const cpu = await tmpProject({}, 'hosts:\n  c: { docker: "tcp://127.0.0.1:1", labels: [h200] }\n');
  await copy(cpu);
  const c = await cli(['validate', f], { cwd: cpu });
  assert.is(c.exitCode, 2, c.stderr);
  assert.match(
    c.stderr,
    /table1\.yaml:\d+:\d+: stages\.test\.sandbox\.gpus_per_run: 1 GPUs per run, but no host matching "h200" lends that many \(most: 0/,
  );
});

test("the paper's RL configs train on verl: the plan says so, the one-GPU variant is a -S away, and a cluster too small is refused before anything runs", async () => {
  const dir = await tmpProject({});
  await cp(join(ROOT, 'experiments'), join(dir, 'experiments'), {
    recursive: true,
    filter: (src) => !src.includes('/reports') && !src.endsWith('.lock.json'),
  });
  for (const f of ['table4.yaml', 'table1-seed-sft.yaml', 'fig8-dynamics.yaml', 'table1-seed-sft-procedural.yaml']) {
    const p = await cli(['plan', join('experiments', 'sandmle', f)], { cwd: dir });
    assert.is(p.exitCode, 0, p.stderr);
    assert.match(p.stdout, /run +(rl|sandmle_8b) +no entry +→ a verl Ray job on 1 × 8 GPUs/, `${f}: ${p.stdout}`);
  }
  const one = await cli(
    ['plan', 'experiments/sandmle/table4.yaml', '-S', 'stages.sparse_8b.with.verl.gpus_per_node=1', '--json'],
    { cwd: dir },
  );
  assert.equal(
    JSON.parse(one.stdout)
      .nodes.filter((n: { stage: string }) => n.stage.endsWith('_8b') && n.stage !== 'seed_sft_8b')
      .map((n: { stage: string; placement: string }) => `${n.stage}: ${n.placement.slice(0, 26)}`),
    [
      'sandmle_8b: a verl Ray job on 1 × 8 GP',
      'sft_sandmle_8b: a verl Ray job on 1 × 8 GP',
      'sparse_8b: a verl Ray job on 1 × 1 GP',
    ],
  );
  const small = await cli(
    [
      'validate',
      'experiments/sandmle/table4.yaml',
      '-S',
      'stages.sparse_8b.with.verl.gpus_per_node=1',
      '-S',
      'stages.sparse_8b.with.verl.gpu_memory_gib=40',
    ],
    { cwd: dir },
  );
  assert.is(small.exitCode, 2, small.stdout + small.stderr);
  assert.match(
    small.stderr,
    /table4\.yaml:\d+:\d+: stages\.sparse_8b\.with\.verl: stage sparse_8b: no layout of 8\.2B parameters fits 1 × 1 GPUs of 40 GiB/,
  );
});

test("table1-seed-sft-procedural's SFT trains on verl: the plan says so, one H200 fits offloaded, a GPU too small or an entry without weights is refused before anything runs", async () => {
  const dir = await tmpProject({
    'e.yaml':
      'name: e\nmodels:\n  base: { provider: openai, base_url: "http://127.0.0.1:1/v1", model: qwen3-8b }\n  small: { provider: worker, model: qwen3-8b, tiny: 0 }\n  lora: { provider: worker, path: /models/Qwen3-8B, model: qwen3-8b, lora_rank: 8 }\nstages:\n  s: { uses: sft, with: { model: lora, trainer: verl, data: chat.jsonl } }\n',
    'chat.jsonl':
      JSON.stringify({
        messages: [
          { role: 'user', content: 'hi' },
          { role: 'assistant', content: 'hello' },
        ],
      }) + '\n',
  });
  await cp(join(ROOT, 'experiments'), join(dir, 'experiments'), {
    recursive: true,
    filter: (src) => !src.includes('/reports') && !src.endsWith('.lock.json'),
  });
  const f = 'experiments/sandmle/table1-seed-sft-procedural.yaml';
  const p = await cli(['plan', f], { cwd: dir });
  assert.match(p.stdout, /run +sft +no entry +→ a verl SFT Ray job on 1 × 8 GPUs/, p.stdout);
  const one = await cli(
    ['validate', f, '-S', 'stages.sft.with.verl.gpus_per_node=1', '-S', 'stages.rl.with.verl.gpus_per_node=1'],
    { cwd: dir },
  );
  assert.is(one.exitCode, 0, one.stderr);
  const small = await cli(
    ['validate', f, '-S', 'stages.sft.with.verl.gpus_per_node=1', '-S', 'stages.sft.with.verl.gpu_memory_gib=24'],
    { cwd: dir },
  );
  assert.is(small.exitCode, 2, small.stdout + small.stderr);
  assert.match(
    small.stderr,
    /table1-seed-sft-procedural\.yaml:\d+:\d+: stages\.sft\.with\.verl: stage sft: no layout of 8\.2B parameters fits 1 × 1 GPUs of 24 GiB at 40000 tokens a sequence: .*52\.2 GiB per GPU to train/,
  );
  const lora = await cli(['validate', 'e.yaml'], { cwd: dir });
  assert.is(lora.exitCode, 2, lora.stdout);
  assert.match(
    lora.stderr,
    /e\.yaml:7:\d+: stages\.s\.with\.model: trainer: verl fine-tunes every weight and saves them whole: lora has lora_rank: 8/,
  );
  const none = await cli(['validate', 'e.yaml', '-S', 'stages.s.with.model=base'], { cwd: dir });
  assert.match(
    none.stderr,
    /e\.yaml:3:3: models\.base: stage s trains base with trainer: verl, which loads its weights from path:.*this entry names none/,
    none.stderr,
  );
  // A tiny: entry names weights the node writes itself (a tiny random model in the shape vLLM's CPU build serves).
  const tiny = await cli(['validate', 'e.yaml', '-S', 'stages.s.with.model=small'], { cwd: dir });
  assert.is(tiny.exitCode, 0, tiny.stderr);
});

test.run();
