// The MLToolBench-style suite: how long each instance's starter train.py takes
// (a cold interpreter, as an agent's Execute Script would run it) and how long
// one diagnostic tool call on a task takes in the sandbox. Instances are built
// with one baseline seed (BENCH_SPLIT: train, id, ood or all, default all;
// BENCH_TOOL_REPS calls per tool, default 3). The last line is one JSON object.
import { execa } from 'execa';
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { choosePython } from '../core/python.js';
import { selectInstances, type SuiteSplit } from '../tasks/mltoolbench.js';
import { runToolOnTask } from '../tools/task.js';

const split = (process.env.BENCH_SPLIT ?? 'all') as SuiteSplit | 'all';
const REPS = Number(process.env.BENCH_TOOL_REPS ?? 3);
const python = choosePython().path;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const round = (x: number) => Number(x.toFixed(3));

const root = await mkdtemp(join(tmpdir(), 'mlepipe-bench-mltb-'));
const load0 = loadavg()[0];
try {
  const picked = selectInstances({ split });
  const b = await execa(
    python,
    ['-m', 'mltoolbench', 'build', ...picked.map((i) => i.id), '--out', root, '--runs', '1'],
    { cwd: join(process.cwd(), 'tasks', 'py'), env: { PYTHONDONTWRITEBYTECODE: '1' } },
  );
  if (b.exitCode !== 0) throw new Error(b.stderr);
  const starter: Array<{ id: string; template: string; seconds: number }> = [];
  for (const inst of picked) {
    const t0 = performance.now();
    await execa(python, ['public/train.py', '--seed', '0', '--out', join(root, 'sub.csv')], {
      cwd: join(root, inst.id),
      env: { OMP_NUM_THREADS: '1', OPENBLAS_NUM_THREADS: '1' },
    });
    starter.push({ id: inst.id, template: inst.template, seconds: (performance.now() - t0) / 1000 });
    console.log(`${inst.id.padEnd(30)} ${starter.at(-1)!.seconds.toFixed(2)} s`);
  }
  const secs = starter.map((s) => s.seconds);
  const slowest = starter.reduce((a, s) => (s.seconds > a.seconds ? s : a));
  // One tabular task and one shared tool on the starter script, in a bwrap jail as an agent's call runs.
  const task = join(root, selectInstances({ split: 'all', templates: ['tab-titanic'] })[0].id);
  const calls: Record<string, number[]> = { detect_missing_values: [], verify_hyperparam_effective: [] };
  for (let k = 0; k < REPS; k++) {
    for (const [tool, pairs] of [
      ['detect_missing_values', ['path=public/train.csv']],
      ['verify_hyperparam_effective', ['path=public/train.py']],
    ] as const) {
      const t0 = performance.now();
      const a = await runToolOnTask({ task, tool, pairs: [...pairs] }, { backend: 'bwrap', python });
      if (!a.ok) throw new Error(`${tool}: ${a.text}`);
      calls[tool].push(performance.now() - t0);
    }
  }
  console.log(
    `starter: median ${median(secs).toFixed(2)} s, max ${slowest.seconds.toFixed(2)} s (${slowest.id}) over ${secs.length} instances`,
  );
  for (const [tool, ms] of Object.entries(calls))
    console.log(`${tool}: median ${median(ms).toFixed(0)} ms over ${ms.length} calls (fresh jail each)`);
  console.log(
    JSON.stringify({
      bench: 'mltoolbench',
      split,
      instances: secs.length,
      starter_median_s: round(median(secs)),
      starter_max_s: round(slowest.seconds),
      starter_max_id: slowest.id,
      tool_call_median_ms: Object.fromEntries(Object.entries(calls).map(([t, ms]) => [t, Math.round(median(ms))])),
      load_start: round(load0),
      load_end: round(loadavg()[0]),
    }),
  );
} finally {
  await rm(root, { recursive: true, force: true });
}
