// The shipped experiments through the built CLI: `plan --check` on SandMLE's Table 1 names the weights,
// MLE-bench's checkout and data and the sandbox hosts this machine lacks and exits 3; the quick start
// needs nothing and exits 0.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { cli, ROOT } from '../helpers.js';

const AWAY = {
  QWEN3_8B: '/nonexistent/Qwen3-8B',
  MLEBENCH_DATA: '/nonexistent/data',
  MLEBENCH_CODE: '/nonexistent/mle',
};

test('plan --check on sandmle/table1 lists the weights, data, checkout and host it lacks, and exits 3', async () => {
  const r = await cli(['plan', 'experiments/sandmle/table1.yaml', '--check'], { cwd: ROOT, env: AWAY });
  assert.is(r.exitCode, 3, r.stderr);
  const file = 'experiments/sandmle/table1.yaml';
  for (const line of [
    `missing: MLE-bench checkout /nonexistent/mle (stages.lite.with.mlebench, ${file}:`,
    `missing: MLE-bench data folder /nonexistent/data (stages.lite.with.data, ${file}:`,
    `missing: model weights /nonexistent/Qwen3-8B (models.qwen3_8b.path, experiments/sandmle/chain.yaml:`,
    `missing: host named or labelled "h200" for this node's sandboxes (stages.test.sandbox.on, ${file}:`,
  ])
    assert.ok(r.stdout.includes(line), `${line}\n${r.stdout}`);
  // Every node of the chain it extends lacks something here (weights, GPUs, endpoints), except the filter.
  assert.match(r.stderr, /preflight: \d+ of \d+ node\(s\) to run lack what they need/);
  // Plain plan lists the same and exits 0.
  assert.is((await cli(['plan', 'experiments/sandmle/table1.yaml'], { cwd: ROOT, env: AWAY })).exitCode, 0);
});

test('plan --check on the quick start finds nothing missing', async () => {
  const r = await cli(['plan', 'experiments/quickstart.yaml', '--check', '--force'], { cwd: ROOT });
  assert.is(r.exitCode, 0, r.stdout + r.stderr);
  assert.not.match(r.stdout, 'missing');
  assert.match(r.stderr, 'preflight: nothing missing for the 3 node(s) to run');
});

test.run();
