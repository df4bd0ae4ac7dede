// Warm grade servers: evaluators run as `python SCRIPT ARGS` would, in a fork
// of a server that imported the numeric stack once; grades of the same bytes
// are reused.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pidAlive } from '../core/proc.js';
import { choosePython } from '../core/python.js';
import { gradeSubmission } from './evaluate.js';
import { GradePool, runTrusted } from './grader.js';

const python = choosePython().path;
let dir: string;
const script = async (name: string, body: string) => {
  await writeFile(join(dir, name), body);
  return join(dir, name);
};
const run = (file: string, args: string[] = [], timeoutMs = 60_000) =>
  runTrusted(python, file, args, { cwd: dir, timeoutMs });

test.before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'mlepipe-grader-'));
});
test.after(() => rm(dir, { recursive: true, force: true }));

test('a script runs as `python SCRIPT ARGS` in its folder, in a fork of one warm server', async () => {
  const f = await script(
    'who.py',
    'import os, sys, random\nprint(os.getppid(), os.getcwd(), sys.argv[1:], __name__, "numpy" in sys.modules, random.random())\n',
  );
  const a = await run(f, ['--submission_path', 'x.csv']);
  const b = await run(f, ['y']);
  assert.is(a.exitCode, 0, a.stderr);
  const [ppidA, cwd, ...restA] = a.stdout.trim().split(' ');
  const [ppidB, , ...restB] = b.stdout.trim().split(' ');
  assert.is(cwd, dir);
  assert.match(restA.join(' '), "['--submission_path', 'x.csv'] __main__ True");
  assert.match(restB.join(' '), "['y'] __main__ True");
  // A server forked both (a cold start's parent would be this process); numpy was imported before the fork.
  assert.is.not(Number(ppidA), process.pid);
  assert.is(ppidA, ppidB);
  // Seeds are fresh in every fork, as in a new interpreter.
  assert.is.not(restA.at(-1), restB.at(-1));
});

test('exit codes, exceptions and output on both streams come back', async () => {
  const exit = await run(
    await script('exit.py', 'import sys\nprint("out")\nprint("err", file=sys.stderr)\nsys.exit(3)\n'),
  );
  assert.equal([exit.exitCode, exit.stdout, exit.stderr, exit.timedOut], [3, 'out\n', 'err\n', false]);
  const boom = await run(await script('boom.py', 'raise ValueError("bad submission")\n'));
  assert.is(boom.exitCode, 1);
  assert.match(boom.stderr, 'ValueError: bad submission');
  const msg = await run(await script('msg.py', 'raise SystemExit("no rows")\n'));
  assert.is(msg.exitCode, 1);
  assert.match(msg.stderr, 'no rows');
});

test('a script past its timeout is killed with everything it started', async () => {
  const marker = join(dir, 'child.pid');
  const f = await script(
    'slow.py',
    `import subprocess, time\np = subprocess.Popen(['sleep', '300'])\nopen(${JSON.stringify(marker)}, 'w').write(str(p.pid))\ntime.sleep(300)\n`,
  );
  const r = await run(f, [], 1500);
  assert.is(r.timedOut, true);
  const child = Number(await readFile(marker, 'utf8'));
  for (let i = 0; i < 50 && pidAlive(child); i++) await new Promise((res) => setTimeout(res, 100));
  assert.not.ok(pidAlive(child), "the evaluator's own child is gone");
  // The server still serves.
  const ok = await run(await script('ok.py', 'print("fine")\n'));
  assert.is(ok.stdout.trim(), 'fine');
});

test('the same submission bytes are graded once', async () => {
  const task = join(dir, 'task');
  const ws = join(dir, 'ws');
  await mkdir(join(task, 'private'), { recursive: true });
  await mkdir(ws);
  const count = join(dir, 'count');
  await writeFile(
    join(task, 'private', 'evaluator.py'),
    `import json\nopen(${JSON.stringify(count)}, 'a').write('x')\nprint(json.dumps({"score": 1.0, "gold_threshold": 3, "silver_threshold": 2, "bronze_threshold": 1, "median_threshold": 0.5, "is_lower_better": False}))\n`,
  );
  await writeFile(join(ws, 'submission.csv'), 'id,y\n1,0\n');
  const g1 = await gradeSubmission(task, ws, { python });
  const g2 = await gradeSubmission(task, ws, { python });
  assert.equal(g1, g2);
  assert.ok(g1.ok);
  assert.is(await readFile(count, 'utf8'), 'x');
  // Other bytes: graded again.
  await writeFile(join(ws, 'submission.csv'), 'id,y\n1,1\n');
  await gradeSubmission(task, ws, { python });
  assert.is(await readFile(count, 'utf8'), 'xx');
});

test('MLEPIPE_COLD_GRADES=1 runs cold interpreters instead', async () => {
  process.env.MLEPIPE_COLD_GRADES = '1';
  try {
    const r = await run(await script('parent.py', 'import os\nprint(os.getppid())\n'));
    assert.is(Number(r.stdout.trim()), process.pid);
  } finally {
    delete process.env.MLEPIPE_COLD_GRADES;
  }
});

test('warm and cold grades see the same environment, PYTHONPATH included', async () => {
  await mkdir(join(dir, 'lib'), { recursive: true });
  await writeFile(join(dir, 'lib', 'on_path.py'), 'VALUE = 42\n');
  const f = await script(
    'uses-path.py',
    'import os, on_path\nprint(on_path.VALUE, os.environ.get("MLEPIPE_GRADE_PROBE"))\n',
  );
  const saved = { ...process.env };
  Object.assign(process.env, { PYTHONPATH: join(dir, 'lib'), MLEPIPE_GRADE_PROBE: 'seen' });
  const pool = new GradePool(python, 1);
  try {
    const warm = await pool.run(f, [], dir, 60_000);
    process.env.MLEPIPE_COLD_GRADES = '1';
    const cold = await run(f);
    assert.ok(warm, 'a warm server ran it');
    assert.is(cold.exitCode, 0, cold.stderr);
    assert.equal(
      [warm!.exitCode, warm!.stdout.trim(), warm!.stderr.trim()],
      [cold.exitCode, cold.stdout.trim(), cold.stderr.trim()],
    );
    assert.is(warm!.stdout.trim(), '42 seen');
  } finally {
    pool.close();
    for (const k of ['PYTHONPATH', 'MLEPIPE_GRADE_PROBE', 'MLEPIPE_COLD_GRADES']) {
      if (saved[k] === undefined) delete process.env[k];
      else process.env[k] = saved[k];
    }
  }
});

test.run();
