// Validation as `validate`, `plan` and `run` see it: every problem that shows
// without running a node, all of them at once, each at FILE:LINE:COL.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdir, mkdtemp, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { UserError } from '../../core/errors.js';
import { loadExperiment } from '../config/load.js';

async function project(files: Record<string, string>): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'mlepipe-validate-'));
  await writeFile(join(dir, 'mlepipe.config.yaml'), '{}\n');
  for (const [name, text] of Object.entries(files)) {
    await mkdir(dirname(join(dir, name)), { recursive: true });
    await writeFile(join(dir, name), text);
  }
  return dir;
}

/** `LINE:COL path: message` for each diagnostic of e.yaml, or [] when it loads. */
async function errors(
  yaml: string,
  files: Record<string, string> = {},
  env: NodeJS.ProcessEnv = {},
): Promise<string[]> {
  const dir = await project({ ...files, 'e.yaml': yaml });
  try {
    await loadExperiment(join(dir, 'e.yaml'), { env });
  } catch (err) {
    if (!(err instanceof UserError)) throw err;
    return err.diagnostics.map((d) => `${d.pos?.line}:${d.pos?.col} ${d.path}: ${d.message}`.replaceAll(dir, '<dir>'));
  }
  return [];
}

test('shell outs and deps that leave the experiment folder are refused where they are written', async () => {
  const e = await errors(
    'name: e\nstages:\n  a: { uses: shell, with: { run: x, outs: [ok.txt, ../../x, /tmp/y], deps: [../up.py] } }\n',
  );
  assert.equal(e, [
    '3:52 stages.a.with.outs[1]: ../../x leaves the experiment folder (outs are relative paths inside it)',
    '3:61 stages.a.with.outs[2]: /tmp/y is an absolute path (outs are relative paths inside the experiment folder)',
    '3:77 stages.a.with.deps[0]: ../up.py leaves the experiment folder (deps are relative paths inside it)',
  ]);
  // Climbing out and back in is fine; naming the folder itself is not an output.
  assert.equal(await errors('name: e\nstages:\n  a: { uses: shell, with: { run: x, outs: [sub/../o.txt] } }\n'), []);
  assert.equal(await errors('name: e\nstages:\n  a: { uses: shell, with: { run: x, outs: [.] } }\n'), [
    '3:44 stages.a.with.outs[0]: . names the experiment folder itself (outs are relative paths inside it)',
  ]);
});

test('a missing deps file is reported by validation, every one of them', async () => {
  const e = await errors(
    'name: e\nstages:\n  a: { uses: shell, with: { run: x, deps: [here.py, gone.py] } }\n  b: { uses: shell, with: { run: x, deps: [nope/] } }\n',
    { 'here.py': '' },
  );
  assert.equal(e, [
    '3:53 stages.a.with.deps[1]: dependency gone.py does not exist (looked for <dir>/gone.py)',
    '4:44 stages.b.with.deps[0]: dependency nope/ does not exist (looked for <dir>/nope)',
  ]);
});

test('unknown seed sets and seed ids, with a suggestion', async () => {
  const e = await errors(
    'name: e\nstages:\n  g: { uses: generate, with: { seeds: mlebnch } }\n  h: { uses: generate, with: { seeds: [no-such-seed] } }\n',
  );
  assert.is(e.length, 2);
  assert.match(e[0], /^3:39 stages\.g\.with\.seeds: unknown seed set "mlebnch" \(did you mean "mlebench"\?\)/);
  assert.match(e[1], /^4:40 stages\.h\.with\.seeds\[0\]: unknown seed "no-such-seed"/);
});

test('generate: samples out of order, llm without a model, modalities that keep nothing', async () => {
  const e = await errors(
    'name: e\nstages:\n  g: { uses: generate, with: { samples: [90, 50], backend: llm, modalities: [nothing] } }\n',
  );
  assert.equal(e, [
    '3:41 stages.g.with.samples: samples: 90 is above 50',
    '3:60 stages.g.with.backend: backend: llm needs model: (the name of a models: entry)',
    '3:77 stages.g.with.modalities: no seed of mlebench has these modalities or generators',
  ]);
});

test('a filter or eval fed by a stage that gives no tasks is refused', async () => {
  const e = await errors(`name: e
stages:
  prep: { uses: shell, with: { run: x } }
  f: { uses: filter, needs: [prep] }
  ev: { uses: eval, needs: [prep], with: { policy: scripted:forest } }
  lone: { uses: eval, with: { policy: scripted:forest } }
`);
  assert.equal(e, [
    '4:29 stages.f.needs: filter reads tasks from its inputs, but no stage in needs: gives them (prep: shell gives files); tasks come from generate, mlebench, mltoolbench, filter',
    '5:28 stages.ev.needs: eval reads tasks from its inputs, but no stage in needs: gives them (prep: shell gives files); tasks come from generate, mlebench, mltoolbench, filter',
    '6:3 stages.lone: eval reads tasks from its inputs, but it has no needs:; tasks come from generate, mlebench, mltoolbench, filter',
  ]);
});

test('the right inputs pass: generate → filter → eval, eval on a tasks: folder, a shell that declares tasks in outs', async () => {
  const ok = await errors(
    `name: e
stages:
  gen: { uses: generate, with: { count: 2 } }
  f: { uses: filter, needs: [gen] }
  ev: { uses: eval, needs: [f], with: { policy: scripted:forest, split: val } }
  own: { uses: shell, with: { run: x, outs: [tasks] } }
  ev2: { uses: eval, needs: [own], with: { policy: scripted:forest } }
  ev3: { uses: eval, with: { policy: scripted:forest, tasks: mine } }
`,
    { 'mine/.keep': '' },
  );
  assert.equal(ok, []);
});

test('split, val_split and template policies ask for what only a filter or a grpo stage gives', async () => {
  const e = await errors(`name: e
stages:
  gen: { uses: generate, with: { count: 2 } }
  ev: { uses: eval, needs: [gen], with: { policy: template, split: train } }
  rl: { uses: grpo, needs: [gen] }
`);
  assert.equal(e, [
    '4:28 stages.ev.needs: eval reads a train/val split from its inputs, but no stage in needs: gives one (gen: generate gives tasks); a split comes from filter',
    '4:28 stages.ev.needs: eval reads a trained policy from its inputs, but no stage in needs: gives one (gen: generate gives tasks); a trained policy comes from grpo',
    '5:28 stages.rl.needs: grpo reads a train/val split from its inputs, but no stage in needs: gives one (gen: generate gives tasks); a split comes from filter',
  ]);
});

test('eval and grpo: a tasks: folder or a template checkpoint that does not exist', async () => {
  const e = await errors(`name: e
stages:
  ev: { uses: eval, with: { tasks: nowhere, policies: [scripted:forest, template:ck.json] } }
  rl: { uses: grpo, with: { tasks: nowhere, split: all } }
`);
  assert.equal(e, [
    '3:36 stages.ev.with.tasks: tasks: nowhere does not exist',
    '3:73 stages.ev.with.policies[1]: template:ck.json: no such checkpoint file',
    '4:36 stages.rl.with.tasks: tasks: nowhere does not exist',
  ]);
});

test('verl trains the weights of path:, so a policy entry without one is refused at the entry', async () => {
  const e = await errors(
    `name: e
models:
  label: { provider: openai, base_url: "http://127.0.0.1:1/v1", model: qwen3-8b }
  weights: { provider: openai, base_url: "http://127.0.0.1:1/v1", model: qwen3-8b, path: Qwen/Qwen3-8B }
stages:
  rl: { uses: grpo, with: { tasks: t, split: all, val_split: all, policy: label, trainer: verl-export } }
  again: { uses: grpo, with: { tasks: t, split: all, val_split: all, policy: label, trainer: verl } }
  ok: { uses: grpo, with: { tasks: t, split: all, val_split: all, policy: weights, trainer: verl-export } }
  ev: { uses: eval, with: { tasks: t, policies: [label] } }
`,
    { 't/.keep': '' },
  );
  assert.equal(e, [
    '3:3 models.label: stage rl trains label with trainer: verl-export, which loads its weights from path: (a Hugging Face model folder, or a hub id such as Qwen/Qwen3-8B), a full-weight checkpoint: of a stage in needs:, or tiny: (a tiny random model the node writes); this entry names none',
  ]);
});

test("a CPU run's model must have heads vLLM's CPU build serves: one of 16 is refused at verl.device; tiny: is written to fit", async () => {
  const e = await errors(
    `name: e
models:
  small: { provider: worker, path: small, model: small }
  fits: { provider: worker, path: fits, model: fits }
  tiny: { provider: worker, tiny: 0, model: tiny }
stages:
  rl: { uses: grpo, with: { tasks: t, split: all, val_split: all, policy: small, trainer: verl, verl: { device: cpu } } }
  gpu: { uses: grpo, with: { tasks: t, split: all, val_split: all, policy: small, trainer: verl, verl: { gpus_per_node: 1 } } }
  ok: { uses: grpo, with: { tasks: t, split: all, val_split: all, policy: fits, trainer: verl, verl: { device: cpu } } }
  made: { uses: sft, with: { data: d.jsonl, model: tiny, trainer: verl, verl: { device: cpu } } }
`,
    {
      't/.keep': '',
      'd.jsonl': '{"messages": [{"role": "user", "content": "x"}, {"role": "assistant", "content": "y"}]}\n',
      'small/config.json': JSON.stringify({ hidden_size: 64, num_attention_heads: 4, head_dim: 16 }),
      'fits/config.json': JSON.stringify({ hidden_size: 64, num_attention_heads: 2, head_dim: 32 }),
    },
  );
  assert.equal(e.length, 1, e.join('\n'));
  assert.match(
    e[0],
    /^7:113 stages\.rl\.with\.verl\.device: stage rl runs small \(small\) on vLLM's CPU build: vLLM's CPU build serves attention heads of 32 or more, and this model's are 16/,
  );
});

test('verl takes a full-weight checkpoint from needs:, not a LoRA adapter; a layout that cannot fit its GPUs is refused at verl:', async () => {
  const e = await errors(
    `name: e
models:
  base: { provider: worker, model: qwen3-8b, tiny: 0 }
  full: { provider: worker, model: qwen3-8b-sft, checkpoint: sft, lora_rank: 0 }
  adapter: { provider: worker, model: qwen3-8b-sft, checkpoint: sft, lora_rank: 16 }
  big: { provider: openai, base_url: "http://127.0.0.1:1/v1", model: qwen3-14b, path: Qwen/Qwen3-14B }
stages:
  sft: { uses: sft, with: { model: base, data: d.jsonl } }
  rl: { uses: grpo, needs: [sft], with: { tasks: t, split: all, val_split: all, policy: full, trainer: verl } }
  lora: { uses: grpo, needs: [sft], with: { tasks: t, split: all, val_split: all, policy: adapter, trainer: verl } }
  small:
    uses: grpo
    with: { tasks: t, split: all, val_split: all, policy: big, trainer: verl-export, verl: { gpus_per_node: 1, gpu_memory_gib: 24 } }
`,
    {
      't/.keep': '',
      'd.jsonl':
        JSON.stringify({
          messages: [
            { role: 'user', content: 'a' },
            { role: 'assistant', content: 'b' },
          ],
        }) + '\n',
    },
  );
  assert.is(e.length, 2, e.join('\n'));
  assert.match(
    e[0],
    /^5:3 models\.adapter: stage lora trains adapter with trainer: verl, .* its checkpoint: sft is a LoRA adapter \(lora_rank: 16\)/,
  );
  assert.match(
    e[1],
    /^13:86 stages\.small\.with\.verl: stage small: no layout of 14\.8B parameters fits 1 × 1 GPUs of 24 GiB/,
  );
});

test('each ablation variant of a verl stage is checked against its GPUs, at the matrix, naming the variant', async () => {
  const e = await errors(
    `name: e
models:
  small: { provider: openai, base_url: "http://127.0.0.1:1/v1", model: qwen3-8b, path: Qwen/Qwen3-8B }
  moe: { provider: openai, base_url: "http://127.0.0.1:1/v1", model: qwen3-30b-a3b, path: Qwen/Qwen3-30B-A3B }
stages:
  rl: { uses: grpo, with: { tasks: t, split: all, val_split: all, policy: small, trainer: verl-export, verl: { gpus_per_node: 1, gpu_memory_gib: 48 } } }
  scales:
    uses: ablate
    target: rl
    matrix: { policy: [small, moe] }
`,
    { 't/.keep': '' },
  );
  assert.is(e.length, 1, e.join('\n'));
  // The 8B variant fits one 48 GiB GPU offloaded; the 30B-A3B one's bf16 weights alone do not fit vLLM's share.
  assert.match(
    e[0],
    /^10:5 stages\.scales\.matrix: stage rl \(policy="moe"\): no layout of 30\.5B parameters fits 1 × 1 GPUs of 48 GiB/,
  );
});

test('worker models: exactly one of path, checkpoint, tiny; a checkpoint comes from a stage in needs:', async () => {
  const e = await errors(
    `name: e
models:
  none: { provider: worker, model: m }
  two: { provider: worker, model: m, tiny: 1, path: w }
  tuned: { provider: worker, model: m, checkpoint: rl }
  base: { provider: worker, model: m, tiny: 0 }
stages:
  rl: { uses: grpo, with: { tasks: t, split: all, policy: base, trainer: worker } }
  again: { uses: grpo, with: { tasks: t, split: all, policy: tuned, trainer: worker } }
  ok: { uses: grpo, needs: [rl], with: { tasks: t, split: all, policy: tuned, trainer: worker } }
  ev: { uses: eval, with: { tasks: t, policies: [scripted:forest, tuned] } }
`,
    { 't/.keep': '' },
  );
  assert.equal(e, [
    '3:3 models.none: a worker model names exactly one of path: (a model folder), checkpoint: (a stage in needs:) or tiny: (a seed); this one names 0',
    '4:3 models.two: a worker model names exactly one of path: (a model folder), checkpoint: (a stage in needs:) or tiny: (a seed); this one names 2',
    '9:62 stages.again.with.policy: model tuned serves the checkpoint of stage "rl", which must be in this stage\'s needs:',
    '11:67 stages.ev.with.policies[1]: model tuned serves the checkpoint of stage "rl", which must be in this stage\'s needs:',
  ]);
});

test('unbounded sizes get limits, positioned', async () => {
  const e = await errors(
    `name: e
stages:
  g: { uses: generate, with: { count: 1e9, samples: [50, 1e12], per_seed: 1e9 } }
  ev: { uses: eval, with: { tasks: t, policy: scripted:forest, repeats: 1e9, max_turns: 1e9, step_timeout: 1e9 } }
  rl: { uses: grpo, with: { tasks: t, split: all, steps: 1e9, group_size: 1e6, batch_size: 1e9 } }
  sh: { uses: shell, with: { run: x, timeout_s: 1e9 } }
`,
    { 't/.keep': '' },
  );
  const paths = e.map((l) => l.split(': ')[0]);
  assert.equal(paths, [
    '3:39 stages.g.with.count',
    '3:58 stages.g.with.samples[1]',
    '3:75 stages.g.with.per_seed',
    '4:73 stages.ev.with.repeats',
    '4:89 stages.ev.with.max_turns',
    '4:108 stages.ev.with.step_timeout',
    '5:58 stages.rl.with.steps',
    '5:75 stages.rl.with.group_size',
    '5:92 stages.rl.with.batch_size',
    '6:49 stages.sh.with.timeout_s',
  ]);
  for (const l of e) assert.match(l, /must be <= \d+/);
});

test('unknown reward variables get a suggestion', async () => {
  const e = await errors(
    'name: e\nrewards:\n  r: "0.1*format + exec"\nstages:\n  a: { uses: shell, with: { run: x } }\n',
  );
  assert.is(e.length, 1);
  assert.match(e[0], /^3:20 rewards\.r: unknown variable "exec" \(did you mean "execute"\?\)/);
});

test('schema errors, rule errors and parameter checks are all reported in one pass', async () => {
  const e = await errors(`name: e
rewards:
  r: "0.1*format + exec"
stages:
  gen: { uses: generate, with: { seeds: mlebnch, count: 1e9 } }
  sh: { uses: shell, with: { run: x, deps: [missing.txt] } }
  f: { uses: filter, needs: [sh] }
  bad: { uses: shell, needs: nope, with: { run: x } }
  typo: { uses: shell, with: { run: x }, desc: y }
  b: { uses: shell, needs: [gne], with: { run: x } }
tables:
  t: { from: gn }
`);
  assert.equal(
    e.map((l) => l.split(': ')[0]),
    [
      '3:20 rewards.r',
      '5:41 stages.gen.with.seeds',
      '5:57 stages.gen.with.count',
      '6:45 stages.sh.with.deps[0]',
      '7:29 stages.f.needs',
      '8:30 stages.bad.needs',
      '9:42 stages.typo.desc',
      '10:29 stages.b.needs[0]',
      '12:14 tables.t.from',
    ],
  );
});

test('a stage whose entry is broken is not reported again where others name it', async () => {
  const e = await errors(
    'name: e\nstages:\n  a: { with: { run: x } }\n  b: { uses: shell, needs: [a], with: { run: x } }\ntables:\n  t: { from: a }\n',
  );
  assert.equal(e, ['3:3 stages.a: missing required key "uses"']);
});

test('interpolation errors come with the rest, without repeats at the same place', async () => {
  const e = await errors(
    'name: e\nvars: { n: 2 }\nstages:\n  g: { uses: generate, with: { count: "${vars.cnt}", seeds: mlebnch } }\n',
  );
  assert.is(e.length, 2);
  assert.match(e[0], /^4:40 stages\.g\.with\.count: undefined variable vars\.cnt$/);
  assert.match(e[1], /^4:61 stages\.g\.with\.seeds: unknown seed set "mlebnch"/);
});

test('a refused parameter is not reported a second time through the checks that read it', async () => {
  const e = await errors(
    'name: e\nstages:\n  g: { uses: generate, with: { backend: llm, model: 5, seeds: mlebnch } }\n  ev: { uses: eval, with: { tasks: t, policy: 7 } }\n',
    { 't/.keep': '' },
  );
  assert.is(e.length, 3, e.join('\n'));
  assert.is(e[0], '3:53 stages.g.with.model: must be string');
  assert.match(e[1], /^3:63 stages\.g\.with\.seeds: unknown seed set "mlebnch"/);
  assert.is(e[2], '4:47 stages.ev.with.policy: must be string');
});

test('errors in the project settings come with those of the experiment', async () => {
  const e = await errors('name: e\nstages:\n  a: { uses: shell, with: { run: x, deps: [gone.py] } }\n', {
    'mlepipe.config.yaml': 'concurency: 3\n',
  });
  assert.is(e.length, 2, e.join('\n'));
  assert.match(e[0], /^3:44 stages\.a\.with\.deps\[0\]: dependency gone\.py does not exist/);
  assert.is(e[1], '1:1 concurency: unknown key (did you mean "concurrency"?)');
});

test('ablation values are checked like the target parameter; values the matrix replaces are not', async () => {
  const e = await errors(`name: e
stages:
  g: { uses: generate, with: { seeds: mlebnch, count: 2 } }
  ab: { uses: ablate, target: g, matrix: { seeds: [mlebench, mlebench-tabulr] } }
  sh: { uses: shell, with: { run: x } }
  ab2: { uses: ablate, target: sh, matrix: { deps: [[gone.py]], params.k: [1, "1"] } }
`);
  assert.equal(e.length, 3);
  assert.match(
    e[0],
    /^4:62 stages\.ab\.matrix\.seeds\[1\]: invalid value for g\.with\.seeds: unknown seed set "mlebench-tabulr" \(did you mean "mlebench-tabular"\?\)/,
  );
  assert.is(
    e[1],
    '6:54 stages.ab2.matrix.deps[0][0]: invalid value for sh.with.deps[0]: dependency gone.py does not exist (looked for <dir>/gone.py)',
  );
  assert.is(
    e[2],
    '6:79 stages.ab2.matrix.params.k[1]: gives the same node id as params.k[0] (sh@params.k=1): give the values distinct spellings',
  );
});

test('symlinked dependency folders are fine (reading through them is the point)', async () => {
  const dir = await project({});
  const outside = await mkdtemp(join(tmpdir(), 'mlepipe-data-'));
  await symlink(outside, join(dir, 'data'));
  await writeFile(join(dir, 'e.yaml'), 'name: e\nstages:\n  a: { uses: shell, with: { run: x, deps: [data] } }\n');
  await loadExperiment(join(dir, 'e.yaml'), { env: {} });
});

test.run();
