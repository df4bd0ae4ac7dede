// The SandMLE configs: every file under experiments/sandmle/ loads, and every node in them that trains or
// evaluates Qwen3 weights follows the released code's protocol (its reply format, limits, reward inputs and
// timeout rule, the best validation step handed on). A trained model is always the checkpoint of a node: no
// environment variable names one (the ones the files read are base weights, data and endpoints). The
// paper-scale tables read the chain's nodes, and Table 4's plan evaluates both reward arms at three sizes.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ModelSpec } from '../../core/models.js';
import { loadExperiment } from '../../pipelines/config/load.js';
import type { Experiment } from '../../pipelines/config/types.js';
import { cli, ROOT } from '../helpers.js';

const DIR = join(ROOT, 'experiments', 'sandmle');
const FILES = (await readdir(DIR)).filter((f) => f.endsWith('.yaml')).sort();

/** What the files may read from the environment: base weights, data, checkouts and endpoints. */
const ALLOWED_ENV = new Set([
  'QWEN3_8B',
  'QWEN3_14B',
  'QWEN3_30B_A3B',
  'MLEBENCH_DATA',
  'MLEBENCH_CODE',
  'EXPERT_BASE_URL',
  'EXPERT_MODEL',
  'FACTORY_BASE_URL',
  'FACTORY_MODEL',
  'AIRA_DOJO',
  'AIRA_DOJO_PYTHON',
  'SANDMLE_CHECKOUT',
  'MLE_DOJO',
  'MLE_DOJO_PYTHON',
  'MLE_DOJO_DATA',
]);
const BASE_MODELS = new Set(['qwen3-8b', 'qwen3-14b', 'qwen3-30b-a3b']);

/**
 * A models: entry holding Qwen3 weights a node serves or trains: a base model's path or a checkpoint trained
 * from one (not the CPU stand-ins' tiny models, not an endpoint).
 */
const qwen = (m: ModelSpec | undefined) =>
  m?.provider === 'worker' && m.model.startsWith('qwen3-') && (m.path !== undefined || m.checkpoint !== undefined);

function protocolProblems(e: Experiment, file: string): string[] {
  const out: string[] = [];
  for (const s of e.stages) {
    const p = s.params as Record<string, unknown>;
    const at = `${file}: ${s.id}`;
    if (s.uses === 'grpo' && qwen(e.models[p.policy as string])) {
      const want = { prompt_format: 'sandmle-release', limits: 'release', timeout_rule: 'release', select: 'best-val' };
      for (const [k, v] of Object.entries(want)) if (p[k] !== v) out.push(`${at}: ${k} is ${String(p[k])}, not ${v}`);
      if (p.reward !== 'sandmle-release' && p.submission !== 'last-scored')
        out.push(`${at}: reward ${String(p.reward)} does not read the last scored submission`);
    }
    const policies = [p.policy, ...((p.policies as unknown[] | undefined) ?? [])] as string[];
    if (s.uses === 'eval' && p.scaffold === 'react' && policies.some((n) => qwen(e.models[n])))
      if (p.prompt_format !== 'sandmle-release') out.push(`${at}: evaluates Qwen3 weights in mlepipe's reply format`);
  }
  for (const [name, m] of Object.entries(e.models))
    if (qwen(m) && m.provider === 'worker' && m.path !== undefined && !BASE_MODELS.has(m.model))
      out.push(`${file}: model ${name} (${m.model}) reads trained weights from a path, not a checkpoint: of a node`);
  return out;
}

test('every SandMLE config loads; nodes on Qwen3 weights use the release protocol; trained models are checkpoints', async () => {
  const problems: string[] = [];
  const trained = new Set<string>();
  for (const f of FILES) {
    const e = await loadExperiment(join(DIR, f), { env: {} });
    problems.push(...protocolProblems(e, f));
    for (const s of e.stages) if (s.uses === 'grpo' && qwen(e.models[s.params.policy as string])) trained.add(s.id);
    const text = await readFile(join(DIR, f), 'utf8');
    for (const [, name] of text.matchAll(/\$\{env\.([A-Za-z0-9_]+)/g))
      if (!ALLOWED_ENV.has(name)) problems.push(`${f}: reads \${env.${name}}`);
  }
  assert.equal(problems, []);
  // The chain trains SandMLE and SFT-SandMLE at three sizes; Table 4 adds the sparse arm.
  for (const size of ['8b', '14b', '30b'])
    for (const arm of ['sandmle', 'sft_sandmle', 'sparse']) assert.ok(trained.has(`${arm}_${size}`), `${arm}_${size}`);
});

test("Table 1 evaluates the chain's nodes; Table 4's plan evaluates both reward arms at three sizes on MLE-bench-lite", async () => {
  const t1 = await loadExperiment(join(DIR, 'table1.yaml'), { env: {} });
  const ev = t1.stages.find((s) => s.id === 'test');
  const policies = ev?.params.policies as string[];
  assert.is(policies.length, 12);
  for (const p of policies.filter((n) => !BASE_MODELS.has(t1.models[n].model))) {
    const m = t1.models[p];
    assert.ok(m.provider === 'worker' && m.checkpoint !== undefined && ev?.needs.includes(m.checkpoint), p);
  }
  const plan = await cli(['plan', 'experiments/sandmle/table4.yaml', '--json'], { cwd: ROOT });
  assert.is(plan.exitCode, 0, plan.stderr);
  const nodes = JSON.parse(plan.stdout).nodes as Array<{ id: string; inputs: string[] }>;
  const evals = (arm: string) =>
    nodes.filter(
      (n) => n.inputs.includes('lite') && ['8b', '14b', '30b'].every((s) => n.inputs.includes(`${arm}_${s}`)),
    );
  assert.equal(
    evals('sandmle').map((n) => n.id),
    ['test'],
  );
  assert.equal(
    evals('sparse').map((n) => n.id),
    ['sparse'],
  );
  // The dense arms Table 4 evaluates are the nodes Fig. 8 plots: one key for each run across the files.
  const key = async (f: string, node: string) => {
    const p = await cli(['plan', `experiments/sandmle/${f}`, '--json'], { cwd: ROOT });
    return (JSON.parse(p.stdout).nodes as Array<{ id: string; key: string }>).find((n) => n.id === node)?.key;
  };
  for (const node of ['sandmle_8b', 'sandmle_30b', 'verified'])
    assert.is(await key('fig8-dynamics.yaml', node), await key('table4.yaml', node), node);
});

test("Table 2 plans aira-dojo's AIDE and AIRA greedy on MLE-bench-lite with the chain's 14B and 30B-A3B checkpoints", async () => {
  const t2 = await loadExperiment(join(DIR, 'table2.yaml'), { env: {} });
  const solvers: Record<string, string> = {};
  for (const s of t2.stages.filter((x) => x.uses === 'harness')) {
    assert.is(s.params.harness, 'aira-dojo');
    assert.ok(String(s.params.overlay).endsWith('scaffolds/aira-dojo'), String(s.params.overlay));
    solvers[s.id] = s.params.solver as string;
    const policies = s.params.policies as string[];
    assert.is(policies.length, 6);
    for (const p of policies) {
      const m = t2.models[p];
      // Served by vLLM for the harness; a trained one is the checkpoint of a chain node the stage needs.
      assert.ok(m.provider === 'worker' && m.serve === 'vllm', p);
      if (m.checkpoint !== undefined) assert.ok(s.needs.includes(m.checkpoint), p);
      else assert.ok(BASE_MODELS.has(m.model), p);
    }
    assert.ok(s.needs.includes('lite'));
  }
  assert.equal(solvers, { aide: 'aide_greedy', aira: 'aira_greedy' });
  const plan = await cli(['plan', 'experiments/sandmle/table2.yaml', '--json'], { cwd: ROOT });
  assert.is(plan.exitCode, 0, plan.stderr);
  const ids = (JSON.parse(plan.stdout).nodes as Array<{ id: string }>).map((n) => n.id);
  assert.ok(ids.includes('aide') && ids.includes('aira'), ids.join(' '));
});

test("Table 3 plans MLE-Dojo's MLE-Agent and AIDE for each checkpoint the paper evaluates, its numbers joined", async () => {
  const t3 = await loadExperiment(join(DIR, 'table3.yaml'), { env: {} });
  const runs = new Set<string>();
  for (const s of t3.stages.filter((x) => x.uses === 'harness')) {
    assert.is(s.params.harness, 'mle-dojo');
    assert.ok(String(s.params.overlay).endsWith('scaffolds/mle-dojo'), String(s.params.overlay));
    for (const p of s.params.policies as string[]) runs.add(`${String(s.params.solver)} ${p}`);
  }
  const want = ['qwen3_14b', 'seed_sft_14b', 'sandmle_14b', 'qwen3_30b', 'seed_sft_30b', 'sandmle_30b'];
  for (const solver of ['mleagent', 'aide'])
    for (const p of want) assert.ok(runs.has(`${solver} vllm_${p}`), `${solver} vllm_${p}`);
  for (const p of want.filter((x) => x !== 'qwen3_14b' && x !== 'qwen3_30b'))
    assert.is((t3.models[`vllm_${p}`] as { checkpoint?: string } | undefined)?.checkpoint, p, p);
});

test.run();
