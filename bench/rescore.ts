// Rescoring benchmark: the same eval node (2 tasks × 2 scripted policies × 2 repeats) built in full, and
// rebuilt from its recorded runs after only its reward changed, in interleaved rounds so that a change in
// the machine's load touches both alike. Each round uses a fresh project whose tasks come from one shared
// cache (generated once, outside the timing). The load average is printed before and after; the last
// line is one JSON object with the medians and their ratio.
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLI } from '../test/helpers.js';

const ROUNDS = Number(process.env.MLEPIPE_BENCH_ROUNDS ?? 3);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const load = () => loadavg().map((x) => Number(x.toFixed(2)));

const exp = (seed: number, reward: string) => `name: rescore-bench
stages:
  tasks: { uses: generate, with: { seeds: mlebench-tabular, count: 2, samples: [50, 80], seed: 1 } }
  verified: { uses: filter, needs: [tasks], with: { val: 0 } }
  agents: { uses: eval, needs: [verified], with: { policies: [scripted:linear, scripted:forest], repeats: 2, max_turns: 4, step_timeout: 60, seed: ${seed}, reward: ${reward} } }
`;

function run(cwd: string, file: string): number {
  const t0 = performance.now();
  const r = spawnSync(process.execPath, [CLI, 'run', file], {
    cwd,
    env: { ...process.env, CI: 'true' },
    stdio: ['ignore', 'ignore', 'pipe'],
    encoding: 'utf8',
  });
  if (r.status !== 0) throw new Error(`mlepipe run ${file} exited ${r.status}: ${r.stderr}`);
  return performance.now() - t0;
}

const cache = await mkdtemp(join(tmpdir(), 'mlepipe-bench-rescore-'));
const settings = `cache: ${cache}\n`;
const before = load();
const full: number[] = [];
const rescore: number[] = [];
try {
  // Tasks first, shared by every round (their generation is not what is measured).
  const warm = await mkdtemp(join(tmpdir(), 'mlepipe-bench-rescore-p-'));
  await writeFile(join(warm, 'mlepipe.config.yaml'), settings);
  await writeFile(join(warm, 'e.yaml'), exp(0, 'sandmle-paper'));
  run(warm, 'e.yaml');
  for (let k = 1; k <= ROUNDS; k++) {
    const dir = await mkdtemp(join(tmpdir(), 'mlepipe-bench-rescore-p-'));
    await writeFile(join(dir, 'mlepipe.config.yaml'), settings);
    // A new seed: the eval's episodes run in full; the second file changes only the reward.
    await writeFile(join(dir, 'a.yaml'), exp(k, 'sandmle-paper'));
    await writeFile(join(dir, 'b.yaml'), exp(k, 'sparse'));
    full.push(run(dir, 'a.yaml'));
    rescore.push(run(dir, 'b.yaml'));
    console.log(
      `round ${k}: full ${(full[k - 1] / 1000).toFixed(2)} s, rescore ${(rescore[k - 1] / 1000).toFixed(2)} s`,
    );
    await rm(dir, { recursive: true, force: true });
  }
} finally {
  await rm(cache, { recursive: true, force: true });
}
const f = median(full);
const r = median(rescore);
console.log(`load average before ${before.join(' ')}, after ${load().join(' ')}`);
console.log(
  JSON.stringify({
    bench: 'rescore',
    rounds: ROUNDS,
    runs: 8,
    full_ms: Math.round(f),
    rescore_ms: Math.round(r),
    ratio: Number((f / r).toFixed(1)),
    load_before: before,
    load_after: load(),
  }),
);
