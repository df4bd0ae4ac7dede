// Grading benchmark, side by side in one run: milliseconds per grade of a
// factory task's evaluator in a cold interpreter and in a warm grade server's
// fork, and a repeated grade of the same bytes (reused). The last line is one
// JSON object.
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { choosePython } from '../core/python.js';
import { gradeSubmission } from '../sandbox/evaluate.js';
import { createSandbox } from '../sandbox/index.js';
import { selectSeeds } from '../seeds/index.js';
import { draftSpec } from '../seeds/strategist.js';
import { runEvaluator } from '../tasks/evaluate.js';
import { buildTask } from '../tasks/factory.js';

const REPS = Number(process.env.BENCH_REPS ?? 10);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const python = choosePython().path;

const root = await mkdtemp(join(tmpdir(), 'mlepipe-bench-grading-'));
const empty = join(root, 'empty');
await mkdir(join(empty, 'public'), { recursive: true });
const sandbox = createSandbox({ backend: 'bwrap', warm: true, poolSize: 1, python });
const tasks: string[] = [];
try {
  const seeds = selectSeeds('mlebench');
  for (let i = 0; tasks.length < 3 && i < 12; i++) {
    const spec = draftSpec(seeds[(i * 5) % seeds.length], { seed: 3, index: i });
    const s = await sandbox.open({ task: empty });
    const dest = join(root, 'tasks', spec.task_id);
    const r = await buildTask(spec, dest, { session: s, python });
    await s.close();
    if (r.ok) tasks.push(dest);
  }
} finally {
  await sandbox.shutdown();
}

async function timeGrades(cold: boolean): Promise<number[]> {
  if (cold) process.env.MLEPIPE_COLD_GRADES = '1';
  else delete process.env.MLEPIPE_COLD_GRADES;
  const ms: number[] = [];
  for (let k = 0; k < REPS; k++) {
    for (const t of tasks) {
      const t0 = performance.now();
      const r = await runEvaluator(t, python);
      ms.push(performance.now() - t0);
      if (!r.ok) throw new Error(`${t}: ${r.error}`);
    }
  }
  return ms;
}

try {
  // One warm-up grade starts the servers; then cold and warm alternate in rounds, so load changes hit both.
  await timeGrades(false);
  const cold: number[] = [];
  const warm: number[] = [];
  for (let round = 0; round < 2; round++) {
    cold.push(...(await timeGrades(true)));
    warm.push(...(await timeGrades(false)));
  }
  delete process.env.MLEPIPE_COLD_GRADES;
  // The same submission bytes again: the grade is reused.
  const sub = join(tasks[0], 'public');
  await gradeSubmission(tasks[0], sub, { python }, 'sample_submission.csv');
  const t0 = performance.now();
  await gradeSubmission(tasks[0], sub, { python }, 'sample_submission.csv');
  const reused = performance.now() - t0;
  const out = {
    grades: cold.length,
    cold_ms: Math.round(median(cold)),
    warm_ms: Math.round(median(warm)),
    speedup: +(median(cold) / median(warm)).toFixed(1),
    reused_ms: +reused.toFixed(1),
    tasks: tasks.length,
    python,
  };
  console.log(
    `grading: ${out.grades} grades each way over ${tasks.length} factory tasks; median ${out.cold_ms} ms cold vs ${out.warm_ms} ms warm (${out.speedup}x); a repeated grade of the same bytes ${out.reused_ms} ms`,
  );
  console.log(JSON.stringify(out));
} finally {
  await rm(root, { recursive: true, force: true });
}
