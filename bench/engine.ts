// Engine benchmark, all figures measured side by side in this one run, in
// interleaved rounds so that a change in the machine's load touches them alike:
//  - `node -e 0` (Node's own start) against `mlepipe --version`;
//  - `mlepipe plan` of a generated experiment of 1,000 shell nodes (100 chains
//    of 10) with nothing cached (not even the parse: no cache folder yet), with
//    no node cached but the parse stored, and with every node cached (target < 1 s);
//  - the same through the one-file bundle, to compare with the split one;
//  - plan in-process, and a 50-node experiment's cold run, cached rerun and status.
// The load average is printed before and after; the last line is one JSON object.
import { spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadExperiment } from '../pipelines/config/load.js';
import { makePlan } from '../pipelines/plan.js';
import { bundle } from '../scripts/bundle.mjs';
import { CLI, ROOT } from '../test/helpers.js';

const ROUNDS = Number(process.env.MLEPIPE_BENCH_ROUNDS ?? 7);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const load = () => loadavg().map((x) => Number(x.toFixed(2)));

function timed(args: string[], cwd: string): number {
  const t0 = performance.now();
  const r = spawnSync(process.execPath, args, {
    cwd,
    env: { ...process.env, CI: 'true' },
    stdio: ['ignore', 'ignore', 'pipe'],
    encoding: 'utf8',
  });
  const ms = performance.now() - t0;
  if (r.status !== 0) throw new Error(`node ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  return ms;
}

/** 100 independent chains of 10 shell nodes each. */
function chains(): string {
  const lines = ['name: chains', 'stages:'];
  for (let c = 0; c < 100; c++) {
    for (let i = 0; i < 10; i++) {
      const needs = i ? `needs: [c${c}n${i - 1}], ` : '';
      lines.push(
        `  c${c}n${i}: { uses: shell, ${needs}with: { run: "echo ${c} ${i}", params: { chain: ${c}, step: ${i} } } }`,
      );
    }
  }
  return lines.join('\n') + '\n';
}

function fiftyNodes(): string {
  const lines = ['name: fifty', 'stages:'];
  for (let i = 0; i < 50; i++) {
    const needs = i === 0 ? '' : `needs: [n${Math.floor((i - 1) / 2)}], `;
    lines.push(
      `  n${i}: { uses: shell, ${needs}with: { run: "echo ${i} > $MLEPIPE_OUT/out.txt; echo '{\\"i\\": ${i}}' > $MLEPIPE_OUT/metrics.json" } }`,
    );
  }
  return lines.join('\n') + '\n';
}

async function project(files: Record<string, string>): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'mlepipe-bench-'));
  await writeFile(join(dir, 'mlepipe.config.yaml'), 'cache: .mlepipe\n');
  for (const [name, text] of Object.entries(files)) await writeFile(join(dir, name), text);
  return dir;
}

const loadBefore = load();
// The one-file layout, built beside the sources so that it finds the package's files as dist/ does.
const single = await bundle({ outdir: join(ROOT, 'scratch', 'bench-one-file'), splitting: false });
const cold = await project({ 'chains.yaml': chains() });
const parsed = await project({ 'chains.yaml': chains() });
const warm = await project({ 'chains.yaml': chains() });
const small = await project({ 'fifty.yaml': fiftyNodes() });
try {
  await mkdir(join(parsed, '.mlepipe'));
  timed([CLI, 'plan', 'chains.yaml'], parsed);
  const fill = performance.now();
  timed([CLI, 'run', 'chains.yaml', '-j', '4'], warm);
  console.log(`(filled the cache: 1,000 nodes run in ${((performance.now() - fill) / 1000).toFixed(1)} s)`);

  const t: Record<string, number[]> = {};
  const add = (k: string, ms: number) => (t[k] ??= []).push(ms);
  for (let r = 0; r < ROUNDS; r++) {
    add('node', timed(['-e', '0'], cold));
    add('version', timed([CLI, '--version'], cold));
    add('version_one_file', timed([single, '--version'], cold));
    add('plan_uncached', timed([CLI, 'plan', 'chains.yaml'], cold));
    add('plan_uncached_parse_stored', timed([CLI, 'plan', 'chains.yaml'], parsed));
    add('plan_cached', timed([CLI, 'plan', 'chains.yaml'], warm));
    add('plan_uncached_one_file', timed([single, 'plan', 'chains.yaml'], cold));
  }
  const m = Object.fromEntries(Object.entries(t).map(([k, v]) => [k, Math.round(median(v))]));

  const inproc: number[] = [];
  for (let i = 0; i < 5; i++) {
    const t0 = performance.now();
    await makePlan(await loadExperiment(join(cold, 'chains.yaml'), { env: {} }));
    inproc.push(performance.now() - t0);
  }
  const runCold = timed([CLI, 'run', 'fifty.yaml'], small);
  const runCached: number[] = [];
  const status: number[] = [];
  for (let i = 0; i < 5; i++) {
    runCached.push(timed([CLI, 'run', 'fifty.yaml'], small));
    status.push(timed([CLI, 'status', 'fifty.yaml'], small));
  }
  const loadAfter = load();

  const ratio = (a: number, b: number) => Number((a / b).toFixed(2));
  console.log(
    `medians of ${ROUNDS} interleaved rounds; load average (1, 5, 15 min) ${loadBefore.join(' ')} before, ${loadAfter.join(' ')} after`,
  );
  console.log(`node -e 0                         ${m.node} ms`);
  console.log(
    `mlepipe --version                 ${m.version} ms   (${ratio(m.version, m.node)}× node -e 0; target ≤ 2×)`,
  );
  console.log(
    `  one-file bundle                 ${m.version_one_file} ms   (${ratio(m.version_one_file, m.node)}× node -e 0)`,
  );
  console.log(`plan, 1,000 nodes, nothing cached ${m.plan_uncached} ms   (target < 1000 ms)`);
  console.log(
    `  no node cached, parse stored    ${m.plan_uncached_parse_stored} ms   (${ratio(m.plan_uncached_parse_stored, m.plan_uncached)}× nothing cached)`,
  );
  console.log(
    `plan, 1,000 nodes, all cached     ${m.plan_cached} ms   (${ratio(m.plan_cached, m.plan_uncached)}× nothing cached)`,
  );
  console.log(
    `  one-file bundle, nothing cached ${m.plan_uncached_one_file} ms   (${ratio(m.plan_uncached_one_file, m.plan_uncached)}× split)`,
  );
  console.log(`plan in-process (from the sources) ${Math.round(median(inproc))} ms`);
  console.log(
    `50-node shell experiment: cold run ${Math.round(runCold)} ms, cached rerun ${Math.round(median(runCached))} ms, status ${Math.round(median(status))} ms`,
  );
  console.log(
    JSON.stringify({
      bench: 'engine',
      rounds: ROUNDS,
      load_before: loadBefore,
      load_after: loadAfter,
      node_ms: m.node,
      version_ms: m.version,
      version_over_node: ratio(m.version, m.node),
      version_one_file_ms: m.version_one_file,
      plan_nodes: 1000,
      plan_uncached_ms: m.plan_uncached,
      plan_uncached_parse_stored_ms: m.plan_uncached_parse_stored,
      plan_cached_ms: m.plan_cached,
      plan_cached_over_uncached: ratio(m.plan_cached, m.plan_uncached),
      plan_uncached_one_file_ms: m.plan_uncached_one_file,
      plan_target_ms: 1000,
      plan_inprocess_ms: Math.round(median(inproc)),
      cold_run_50_ms: Math.round(runCold),
      cached_run_50_ms: Math.round(median(runCached)),
      status_50_ms: Math.round(median(status)),
    }),
  );
} finally {
  for (const d of [cold, parsed, warm, small]) await rm(d, { recursive: true, force: true });
}
