// Task factory benchmark, in one run: tasks per minute of the procedural
// factory with warm executors (target ≥ 30), and the per-step latency of one
// solution script on micro and full versions of the same tabular tasks (full:
// the seed competition's own sample count; the paper's ratio is 13.7x). The
// last line is one JSON object.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { choosePython } from '../core/python.js';
import { createSandbox } from '../sandbox/index.js';
import { selectSeeds } from '../seeds/index.js';
import { draftSpec } from '../seeds/strategist.js';
import { buildTask } from '../tasks/factory.js';

const N = Number(process.env.BENCH_TASKS ?? 30);
// Full scale is the seed competition's sample count, capped by this much memory per task (the generate
// stage's full_memory_mb); the solution step is timed BENCH_STEP_REPS times on each task.
const FULL_MB = Number(process.env.BENCH_FULL_MEMORY_MB ?? 256);
const REPS = Number(process.env.BENCH_STEP_REPS ?? 3);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const SOLUTION = `
import pandas as pd
from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor
train, test = pd.read_csv('public/train.csv'), pd.read_csv('public/test.csv')
sample = pd.read_csv('public/sample_submission.csv')
target = sample.columns[1]
X = pd.get_dummies(pd.concat([train.drop(columns=[target]), test]).drop(columns=['id']), dummy_na=True).fillna(0)
Xtr, Xte = X.iloc[:len(train)], X.iloc[len(train):]
y = train[target]
reg = y.dtype != object and y.nunique() > 10
model = (RandomForestRegressor if reg else RandomForestClassifier)(n_estimators=100, random_state=0, n_jobs=1)
ok = y.notna()
model.fit(Xtr[ok], y[ok])
pd.DataFrame({'id': test['id'], target: model.predict(Xte)}).to_csv('submission.csv', index=False)
`;

const root = await mkdtemp(join(tmpdir(), 'mlepipe-bench-tasks-'));
const empty = join(root, 'empty');
await mkdir(join(empty, 'public'), { recursive: true });
const sandbox = createSandbox({ backend: 'bwrap', warm: true, poolSize: 2, python: choosePython().path });
try {
  // 1. Factory throughput: N tasks over all modalities, two at a time.
  const seeds = selectSeeds('mlebench');
  const queue = Array.from({ length: N }, (_, i) => i);
  let ok = 0;
  const t0 = performance.now();
  await Promise.all(
    [0, 1].map(async () => {
      while (queue.length) {
        const i = queue.shift()!;
        const spec = draftSpec(seeds[i % seeds.length], { seed: 11, index: i });
        const s = await sandbox.open({ task: empty });
        const r = await buildTask(spec, join(root, 'gen', spec.task_id), { session: s, python: choosePython().path });
        await s.close();
        if (r.ok) ok++;
      }
    }),
  );
  const minutes = (performance.now() - t0) / 60_000;
  const perMinute = ok / minutes;
  console.log(
    `factory: ${ok}/${N} tasks in ${(minutes * 60).toFixed(1)} s = ${perMinute.toFixed(1)} tasks/min (warm bwrap executors, 2 at a time; target ≥ 30)`,
  );

  // 2. One solution script on micro and full versions of the same tabular tasks.
  const tabular = selectSeeds('mlebench', ['tabular-classification', 'tabular-regression']).slice(0, 3);
  const micro: number[] = [];
  const full: number[] = [];
  for (const [j, dna] of tabular.entries()) {
    for (const scale of ['micro', 'full'] as const) {
      const spec = draftSpec(dna, { seed: 11, index: j, scale, fullMemoryMb: FULL_MB });
      const s = await sandbox.open({ task: empty });
      const dir = join(root, scale, spec.task_id);
      const r = await buildTask(spec, dir, { session: s, python: choosePython().path, timeoutMs: 600_000 });
      await s.close();
      if (!r.ok) throw new Error(`${scale} ${spec.task_id}: ${r.error}`);
      const run = await sandbox.open({ task: dir });
      await writeFile(join(run.workspace, 'solution.py'), SOLUTION);
      const times: number[] = [];
      for (let k = 0; k < REPS; k++) {
        const t = performance.now();
        const res = await run.run({ file: 'solution.py' }, { timeoutMs: 600_000 });
        if (res.exitCode !== 0) throw new Error(res.stderr);
        times.push(performance.now() - t);
      }
      await run.close();
      (scale === 'micro' ? micro : full).push(median(times));
      console.log(
        `${scale.padEnd(5)} ${spec.task_id}: ${spec.n_train} rows, solution step ${median(times).toFixed(0)} ms`,
      );
    }
  }
  const ratio = median(full) / median(micro);
  console.log(
    `solution step: micro ${median(micro).toFixed(0)} ms vs full ${median(full).toFixed(0)} ms = ${ratio.toFixed(1)}x (paper: 13.7x)`,
  );
  console.log(
    JSON.stringify({
      bench: 'tasks',
      tasks_per_minute: Number(perMinute.toFixed(1)),
      tasks_ok: ok,
      tasks_tried: N,
      micro_step_ms: Math.round(median(micro)),
      full_step_ms: Math.round(median(full)),
      full_over_micro: Number(ratio.toFixed(2)),
      full_memory_mb: FULL_MB,
    }),
  );
} finally {
  await sandbox.shutdown();
  await rm(root, { recursive: true, force: true });
}
