// The MLToolBench table configs validate and plan without any user data, as
// written (scripted agents) and extended to a model behind an OpenAI-compatible
// endpoint (as policy, and as the paraphrasing model of Table 6), and their
// ablations make the arms the paper's tables compare.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { cp, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { loadExperiment } from '../../pipelines/config/load.js';
import { compileGraph } from '../../pipelines/compile/graph.js';
import { cli, tmpProject } from '../helpers.js';

const ROOT = join(import.meta.dirname, '..', '..');
const FILES = ['table1.yaml', 'table5-coverage.yaml', 'table6-intervention.yaml', 'fig5-guidance.yaml'];

async function project(): Promise<string> {
  const dir = await tmpProject({});
  for (const f of FILES) await cp(join(ROOT, 'experiments', 'mltoolbench', f), join(dir, f));
  return dir;
}

test('table1, table5-coverage, table6-intervention, fig5-guidance: validate and plan the arms of each table', async () => {
  const dir = await project();
  const v = await cli(['validate', ...FILES], { cwd: dir });
  assert.is(v.exitCode, 0, v.stderr + v.stdout);
  const plan = async (f: string) => {
    const p = await cli(['plan', f], { cwd: dir });
    assert.is(p.exitCode, 0, `${f}: ${p.stderr}`);
    return p.stdout;
  };
  const t1 = await plan('table1.yaml');
  for (const n of ['id@tools=none', 'id@tools=domain', 'ood@tools=none', 'ood@tools=domain'])
    assert.match(t1, new RegExp(`run\\s+${n.replace(/[.@=]/g, '\\$&')}\\s`));
  assert.match(await plan('table5-coverage.yaml'), /2 nodes, 2 to run/);
  const t6 = await plan('table6-intervention.yaml');
  for (const m of ['none', 'mask', 'paraphrase']) assert.match(t6, new RegExp(`arms@intervention\\.mode=${m}\\s`));
  // Fig. 5: guidance × diagnostic access, each split with its own guide node.
  const f5 = await plan('fig5-guidance.yaml');
  for (const split of ['id', 'ood']) {
    assert.match(f5, new RegExp(`run\\s+${split}_hints\\s`));
    for (const tools of ['none', 'domain'])
      for (const g of ['false', 'true'])
        assert.match(f5, new RegExp(`run\\s+${split}@tools=${tools},guidance=${g}\\s`));
  }
});

test("every MLToolBench config offers the paper's two interfaces only: Original (none) or the task domain's tools", async () => {
  // The paper exposes tools by task domain in every run (Table 1, Fig. 5, the trained checkpoints): a node
  // offering all 67 would put other domains' tools in a prompt, which no arm of the paper does.
  const dir = join(ROOT, 'experiments', 'mltoolbench');
  for (const f of (await readdir(dir)).filter((x) => x.endsWith('.yaml'))) {
    const exp = await loadExperiment(join(dir, f), { env: {} });
    for (const n of compileGraph(exp).nodes.values()) {
      const p = n.params as { scaffold?: string; tools?: unknown };
      if ((n.stage.uses === 'eval' || n.stage.uses === 'grpo') && p.scaffold === 'mlab')
        assert.ok(p.tools === 'none' || p.tools === 'domain', `${f}: ${n.id} offers tools: ${JSON.stringify(p.tools)}`);
    }
  }
});

test('every MLToolBench table of success rates shows beside them the best rate the instances allow (attainable_max)', async () => {
  // The paper finds every instance within reach; ten of ours are not (docs/mltoolbench.md), so a success
  // rate here has a ceiling below 100 that the paper's numbers beneath it do not have.
  const dir = join(ROOT, 'experiments', 'mltoolbench');
  let tables = 0;
  for (const f of (await readdir(dir)).filter((x) => x.endsWith('.yaml'))) {
    const exp = await loadExperiment(join(dir, f), { env: {} });
    for (const [name, t] of Object.entries(exp.tables)) {
      const cols = t.columns ?? [];
      if (!cols.includes('success')) continue;
      tables++;
      assert.is(cols[cols.indexOf('success') + 1], 'attainable_max', `${f}: table ${name}`);
    }
  }
  assert.ok(tables >= 20, `${tables} tables`);
});

test('extended to a model: as a policy in table1 and as the paraphrasing model in table6', async () => {
  const dir = await project();
  await writeFile(
    join(dir, 'model1.yaml'),
    'extends: table1.yaml\nname: t1-model\nvars: { policies: [llm, scripted:diagnose] }\n',
  );
  await writeFile(
    join(dir, 'model6.yaml'),
    'extends: table6-intervention.yaml\nname: t6-model\nvars: { policies: [llm] }\nstages:\n  arms: { with: { intervention: { mode: none, tools: all, branch: id, paraphrase_model: llm } } }\n',
  );
  const env = { MLTB_BASE_URL: 'http://127.0.0.1:9/v1', MLTB_MODEL: 'some-model' };
  const v = await cli(['validate', 'model1.yaml', 'model6.yaml'], { cwd: dir, env });
  assert.is(v.exitCode, 0, v.stderr + v.stdout);
  for (const f of ['model1.yaml', 'model6.yaml']) assert.is((await cli(['plan', f], { cwd: dir, env })).exitCode, 0, f);
  // A paraphrasing model that is not a models: entry is refused at its place in the file.
  await writeFile(
    join(dir, 'bad.yaml'),
    'extends: table6-intervention.yaml\nname: t6-bad\nstages:\n  arms: { with: { intervention: { mode: paraphrase, tools: all, branch: id, paraphrase_model: nobody } } }\n',
  );
  const bad = await cli(['validate', 'bad.yaml'], { cwd: dir });
  // Invalid input (exit 2), at the value's line and column.
  assert.is(bad.exitCode, 2, bad.stderr + bad.stdout);
  assert.match(bad.stderr, 'bad.yaml:4:95: stages.arms.with.intervention.paraphrase_model: undefined model "nobody"');
});

test.run();
