// Engine benchmark, all figures measured side by side in this one run:
//  - plan time for a generated 1,000-node experiment (target < 1 s), through
//    the built CLI and in-process;
//  - cold run vs all-cached rerun of a 50-node shell experiment (ratio);
//  - status time on that experiment.
// The last line is one JSON object with the figures.
import { execa } from 'execa';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadExperiment } from '../pipelines/config/load.js';
import { makePlan } from '../pipelines/plan.js';
import { CLI } from '../test/helpers.js';

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function timeCli(args: string[], cwd: string, okCodes = [0]): Promise<number> {
  const t0 = performance.now();
  const r = await execa(process.execPath, [CLI, ...args], { cwd, reject: false, env: { ...process.env, CI: 'true' } });
  const ms = performance.now() - t0;
  if (!okCodes.includes(r.exitCode ?? -1)) throw new Error(`${args.join(' ')} exited ${r.exitCode}: ${r.stderr}`);
  return ms;
}

/** 200 stages in a layered DAG; an ablation over the first multiplies them into 1,000 nodes. */
function bigExperiment(): string {
  const lines = ['name: big', 'stages:'];
  for (let i = 0; i < 200; i++) {
    const needs = i === 0 ? [] : [`s${i - 1}`, ...(i > 5 ? [`s${i - 5}`] : [])];
    lines.push(`  s${i}: { uses: shell, ${needs.length ? `needs: [${needs.join(', ')}], ` : ''}with: { run: "echo ${i}", params: { i: ${i} } } }`);
  }
  lines.push('  sweep: { uses: ablate, target: s0, matrix: { params.seed: [1, 2, 3, 4, 5] } }');
  return lines.join('\n') + '\n';
}

function fiftyNodes(): string {
  const lines = ['name: fifty', 'stages:'];
  for (let i = 0; i < 50; i++) {
    const needs = i === 0 ? '' : `needs: [n${Math.floor((i - 1) / 2)}], `;
    lines.push(`  n${i}: { uses: shell, ${needs}with: { run: "echo ${i} > $MLEPIPE_OUT/out.txt; echo '{\\"i\\": ${i}}' > $MLEPIPE_OUT/metrics.json" } }`);
  }
  return lines.join('\n') + '\n';
}

const dir = await mkdtemp(join(tmpdir(), 'mlepipe-bench-'));
try {
  await writeFile(join(dir, 'mlepipe.config.yaml'), 'cache: .mlepipe\n');
  await writeFile(join(dir, 'big.yaml'), bigExperiment());
  await writeFile(join(dir, 'fifty.yaml'), fiftyNodes());

  const inproc: number[] = [];
  let nodes = 0;
  for (let i = 0; i < 5; i++) {
    const t0 = performance.now();
    const plan = await makePlan(await loadExperiment(join(dir, 'big.yaml'), { env: {} }));
    inproc.push(performance.now() - t0);
    nodes = plan.nodes.length;
  }
  const cliPlan: number[] = [];
  for (let i = 0; i < 5; i++) cliPlan.push(await timeCli(['plan', 'big.yaml', '--json'], dir));
  console.log(`plan, ${nodes}-node experiment: ${median(cliPlan).toFixed(0)} ms through the CLI, ${median(inproc).toFixed(0)} ms in-process (median of 5)`);

  const cold = await timeCli(['run', 'fifty.yaml'], dir);
  const cached: number[] = [];
  for (let i = 0; i < 5; i++) cached.push(await timeCli(['run', 'fifty.yaml'], dir));
  const status: number[] = [];
  for (let i = 0; i < 5; i++) status.push(await timeCli(['status', 'fifty.yaml'], dir));
  const ratio = cold / median(cached);
  console.log(`50-node shell experiment: cold ${cold.toFixed(0)} ms, cached rerun ${median(cached).toFixed(0)} ms (${ratio.toFixed(1)}× faster), status ${median(status).toFixed(0)} ms`);
  console.log(
    JSON.stringify({
      bench: 'engine',
      plan_nodes: nodes,
      plan_cli_ms: Math.round(median(cliPlan)),
      plan_inprocess_ms: Math.round(median(inproc)),
      plan_target_ms: 1000,
      cold_run_50_ms: Math.round(cold),
      cached_run_50_ms: Math.round(median(cached)),
      cold_over_cached: Number(ratio.toFixed(2)),
      status_50_ms: Math.round(median(status)),
    }),
  );
} finally {
  await rm(dir, { recursive: true, force: true });
}
