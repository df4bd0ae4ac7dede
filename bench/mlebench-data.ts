// The mlebench node's cost for a large prepared file, side by side in one run:
// the task folder built the earlier way (the prepared folders copied into the
// node's output, then every file digested for task.json and the cache's
// manifest) and the way it is built now (linked, identified by name, size and
// time). Both build the same competition from the same prepared data; the
// sample grade, the same either way, is left out. MLEPIPE_BENCH_GIB sets the
// file's size (default 2). The load average is printed before and after; the
// last line is one JSON object.
import { cp, mkdir, mkdtemp, rm, writeFile, open } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { dirSize, listFiles } from '../core/fs.js';
import { buildMlebenchTask } from '../tasks/mlebench-build.js';
import { findCompetition } from '../tasks/mlebench.js';

const GIB = Number(process.env.MLEPIPE_BENCH_GIB ?? 2);
const load = () => loadavg().map((x) => Number(x.toFixed(2)));
const root = await mkdtemp(join(tmpdir(), 'mlepipe-bench-mlebench-'));
const id = 'big-images';
const pub = join(root, 'data', id, 'prepared', 'public');
const code = join(root, 'mle', 'mlebench', 'competitions', id);

/** A file of `GIB` GiB that is not sparse (a repeated random MiB), as prepared image archives are. */
async function bigFile(path: string): Promise<void> {
  const chunk = randomBytes(1 << 20);
  const fh = await open(path, 'w');
  for (let i = 0; i < GIB * 1024; i++) await fh.write(chunk);
  await fh.close();
}

async function measure(build: (dest: string) => Promise<void>): Promise<{ seconds: number; output_bytes: number }> {
  const dest = join(root, 'out', String(Math.random()).slice(2), 'tasks', id);
  await mkdir(dest, { recursive: true });
  const t0 = performance.now();
  await build(dest);
  // The cache's manifest digests every regular file of the node's output.
  await listFiles(join(dest, '..', '..'));
  const seconds = (performance.now() - t0) / 1000;
  const output_bytes = await dirSize(join(dest, '..', '..'));
  await rm(join(dest, '..', '..'), { recursive: true, force: true });
  return { seconds: Number(seconds.toFixed(2)), output_bytes };
}

try {
  await mkdir(join(root, 'data', id, 'prepared', 'private'), { recursive: true });
  await mkdir(pub, { recursive: true });
  await mkdir(code, { recursive: true });
  await bigFile(join(pub, 'train.zip'));
  await writeFile(join(pub, 'sample_submission.csv'), 'id,label\n1,0\n');
  await writeFile(join(pub, 'description.md'), '# big\n');
  await writeFile(join(code, 'grade.py'), 'def grade(submission, answers):\n    return 0.0\n');
  await writeFile(join(root, 'data', id, 'prepared', 'private', 'test.csv'), 'id,label\n1,1\n');
  await writeFile(
    join(code, 'config.yaml'),
    `id: ${id}\ndataset:\n  answers: ${id}/prepared/private/test.csv\n  sample_submission: ${id}/prepared/public/sample_submission.csv\ngrader:\n  name: accuracy\n`,
  );
  await writeFile(
    join(code, 'leaderboard.csv'),
    'teamId,score\n' + Array.from({ length: 20 }, (_, i) => `${i},${(i / 20).toFixed(3)}`).join('\n') + '\n',
  );
  const c = findCompetition(join(root, 'data'), join(root, 'mle'), id);
  if ('missing' in c) throw new Error(c.missing);
  const before = load();
  const copied = await measure(async (dest) => {
    await mkdir(join(dest, 'private'), { recursive: true });
    await cp(c.public, join(dest, 'public'), { recursive: true });
    await cp(c.private, join(dest, 'private', 'answers'), { recursive: true });
    await listFiles(dest);
  });
  const linked = await measure(async (dest) => {
    await buildMlebenchTask(c, dest);
  });
  const after = load();
  console.log(`prepared file: ${GIB} GiB; load average before ${before.join(' ')}, after ${after.join(' ')}`);
  console.log(
    `copied and digested: ${copied.seconds} s, ${(copied.output_bytes / 2 ** 30).toFixed(2)} GiB in the node's output`,
  );
  console.log(
    `linked (name, size, time): ${linked.seconds} s, ${(linked.output_bytes / 2 ** 20).toFixed(3)} MiB in the node's output`,
  );
  console.log(
    JSON.stringify({
      bench: 'mlebench-data',
      gib: GIB,
      copied,
      linked,
      speedup: Number((copied.seconds / Math.max(linked.seconds, 0.01)).toFixed(1)),
      load_before: before,
      load_after: after,
    }),
  );
} finally {
  await rm(root, { recursive: true, force: true });
}
