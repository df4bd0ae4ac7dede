// Synthetic leaderboards, per task kind: how often the scripted random and
// majority agents' submissions (the solution kit's own strategies) pass the
// median or win a medal against thresholds set by MLE-bench's rule on the
// reference teams' leaderboard (over the tasks that pass the sanity rule, as
// the filter keeps them); how many tasks pass the sanity rule; and
// what a task costs to build. BENCH_PER_KIND tasks of each of the seven kinds
// (default 8). The last line is one JSON object.
import { execa } from 'execa';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { kitSource } from '../agents/kit/source.js';
import { choosePython } from '../core/python.js';
import { createSandbox } from '../sandbox/index.js';
import { selectSeeds } from '../seeds/index.js';
import { draftSpec } from '../seeds/strategist.js';
import { runEvaluator } from '../tasks/evaluate.js';
import { buildTask } from '../tasks/factory.js';
import { rankScore, type LeaderboardThresholds } from '../tasks/leaderboard.js';
import { sanityProblem, type Thresholds } from '../tasks/sanity.js';

const PER_KIND = Number(process.env.BENCH_PER_KIND ?? 8);
const SEED = Number(process.env.BENCH_SEED ?? 3);
const python = choosePython().path;

interface Row {
  kind: string;
  sane: boolean;
  ms: number;
  random: { above_median: boolean; medal: boolean };
  majority: { above_median: boolean; medal: boolean };
}

const root = process.env.BENCH_KEEP ?? (await mkdtemp(join(tmpdir(), 'mlepipe-bench-leaderboards-')));
const empty = join(root, 'empty');
await mkdir(join(empty, 'public'), { recursive: true });
const sandbox = createSandbox({ backend: 'bwrap', warm: true, poolSize: 2, python });
const seeds = selectSeeds('mlebench');
// BENCH_KINDS (comma-separated) limits the run to some task kinds.
const only = process.env.BENCH_KINDS?.split(',');
const kinds = [...new Set(seeds.map((s) => s.generator))].filter((k) => !only || only.includes(k)).sort();
const jobs = kinds.flatMap((kind) => {
  const of = seeds.filter((s) => s.generator === kind);
  return Array.from({ length: PER_KIND }, (_, i) => ({ kind, dna: of[i % of.length], index: i }));
});
const rows: Row[] = [];
const failed: string[] = [];

/** The kit's random and majority strategies, run on the host in the task's folder (trusted: the bench's own tasks). */
async function strategies(task: string): Promise<Record<'random' | 'majority', string>> {
  const out = { random: join(task, 'random.csv'), majority: join(task, 'majority.csv') };
  const code = `${kitSource()}\nsolve("random", out=${JSON.stringify(out.random)})\nsolve("majority", out=${JSON.stringify(out.majority)})`;
  await execa(python, ['-c', code], { cwd: task });
  return out;
}

try {
  await Promise.all(
    [0, 1].map(async () => {
      for (let job = jobs.shift(); job; job = jobs.shift()) {
        const spec = draftSpec(job.dna, { seed: SEED, index: job.index });
        const dir = join(root, 'tasks', spec.task_id);
        const s = await sandbox.open({ task: empty });
        const t0 = performance.now();
        const r = await buildTask(spec, dir, { session: s, python });
        const ms = performance.now() - t0;
        await s.close();
        if (!r.ok) {
          failed.push(`${spec.task_id}: ${r.stage}: ${r.error}`);
          continue;
        }
        const th = JSON.parse(await readFile(join(dir, 'private', 'threshold.json'), 'utf8')) as Omit<
          LeaderboardThresholds,
          'is_lower_better' | 'teams'
        > &
          Thresholds;
        const lower = spec.is_lower_better;
        const subs = await strategies(dir);
        const place = async (file: string) => {
          const g = await runEvaluator(dir, python, file);
          if (!g.ok) throw new Error(`${spec.task_id}: ${g.error}`);
          const p = rankScore(g.score, { ...th, is_lower_better: lower, teams: 0 });
          if (process.env.BENCH_VERBOSE)
            console.log(
              `${spec.task_id} ${spec.metric}: ${file.split('/').pop()} ${g.score} vs median ${th.median_threshold}, bronze ${th.bronze_threshold}, gold ${th.gold_threshold}`,
            );
          return { above_median: p.above_median, medal: p.gold_medal || p.silver_medal || p.bronze_medal };
        };
        const insane = sanityProblem(th, r.sampleScore, lower);
        if (insane) failed.push(`${spec.task_id}: sanity: ${insane}`);
        rows.push({
          kind: job.kind,
          sane: insane === null,
          ms,
          random: await place(subs.random),
          majority: await place(subs.majority),
        });
      }
    }),
  );
} finally {
  await sandbox.shutdown();
  if (!process.env.BENCH_KEEP) await rm(root, { recursive: true, force: true });
}

const pct = (xs: Row[], f: (r: Row) => boolean) =>
  xs.length ? Math.round((100 * xs.filter(f).length) / xs.length) : 0;
const table = [...kinds, 'all'].map((kind) => {
  const built = kind === 'all' ? rows : rows.filter((r) => r.kind === kind);
  // Rates over the tasks the filter keeps: those are the ones agents are evaluated and trained on.
  const xs = built.filter((r) => r.sane);
  return {
    kind,
    tasks: built.length,
    sane: pct(built, (r) => r.sane),
    random_above_median: pct(xs, (r) => r.random.above_median),
    random_medal: pct(xs, (r) => r.random.medal),
    majority_above_median: pct(xs, (r) => r.majority.above_median),
    majority_medal: pct(xs, (r) => r.majority.medal),
    build_ms: xs.length ? Math.round([...xs.map((r) => r.ms)].sort((a, b) => a - b)[xs.length >> 1]) : 0,
  };
});
const head = [
  'kind',
  'tasks',
  'sane %',
  'random>median %',
  'random medal %',
  'majority>median %',
  'majority medal %',
  'build ms (median)',
];
console.log(head.join(' | '));
for (const t of table)
  console.log(
    [
      t.kind,
      t.tasks,
      t.sane,
      t.random_above_median,
      t.random_medal,
      t.majority_above_median,
      t.majority_medal,
      t.build_ms,
    ].join(' | '),
  );
for (const f of failed) console.log(`dropped: ${f}`);
console.log(
  JSON.stringify({ bench: 'leaderboards', per_kind: PER_KIND, seed: SEED, dropped: failed.length, kinds: table }),
);
