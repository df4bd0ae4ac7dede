// `mlepipe sandbox run` through the built CLI.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { cli, tmpProject } from '../helpers.js';

const FILES = {
  'task/public/train.csv': 'id,y\n1,0\n',
  'task/private/answer.csv': 'id,y\n1,SECRET\n',
  'task/private/evaluator.py':
    'import json\nprint(json.dumps({"score": 0.9, "gold_threshold": 0.95, "silver_threshold": 0.9, "bronze_threshold": 0.8, "median_threshold": 0.5, "is_lower_better": False}))\n',
  'step.py':
    'import sys, os\nprint("args", sys.argv[1:], os.listdir("public"))\nopen("submission.csv", "w").write("id,y\\n1,0\\n")\nprint("oops", file=sys.stderr)\nsys.exit(4)\n',
  'slow.py': 'import time\nprint("started", flush=True)\ntime.sleep(30)\nprint("finished")\n',
};

test('prints one JSON object with the result fields', async () => {
  const dir = await tmpProject(FILES);
  for (const extra of [[], ['--warm'], ['--backend', 'docker']]) {
    const r = await cli(['sandbox', 'run', '--task', 'task', ...extra, 'step.py', 'x', 'y'], { cwd: dir });
    assert.is(r.exitCode, 0, r.stderr);
    const out = JSON.parse(r.stdout);
    assert.equal(Object.keys(out).sort(), [
      'backend',
      'durationMs',
      'exitCode',
      'stderr',
      'stdout',
      'timedOut',
      'truncated',
    ]);
    assert.is(out.exitCode, 4);
    assert.is(out.stdout, "args ['x', 'y'] ['train.csv']\n");
    assert.is(out.stderr.trim(), 'oops');
    assert.is(out.backend, extra[0] === '--warm' ? 'warm-bwrap' : (extra[1] ?? 'bwrap'));
  }
});

test("a task whose public/ is a link to data elsewhere (an MLE-bench task's) is shown as the folder itself, read-only, in every backend", async () => {
  const dir = await tmpProject({
    ...FILES,
    'prepared/public/train.csv': 'id,y\n1,0\n',
    'linked/private/evaluator.py': FILES['task/private/evaluator.py'],
    'look.py':
      'import os\nprint(os.listdir("public"))\ntry:\n    open("public/x", "w")\nexcept OSError as e:\n    print("read-only", e.errno)\n',
  });
  await symlink(join(dir, 'prepared', 'public'), join(dir, 'linked', 'public'));
  for (const extra of [[], ['--warm'], ['--backend', 'docker']]) {
    const r = await cli(['sandbox', 'run', '--task', 'linked', ...extra, 'look.py'], { cwd: dir });
    assert.is(r.exitCode, 0, r.stderr);
    const out = JSON.parse(r.stdout);
    assert.is(out.stdout, "['train.csv']\nread-only 30\n", `${extra.join(' ') || 'bwrap'}: ${out.stdout}${out.stderr}`);
  }
});

test('--timeout, --grade and the `-- python FILE` form', async () => {
  const dir = await tmpProject(FILES);
  const slow = JSON.parse(
    (await cli(['sandbox', 'run', '--task', 'task', '--timeout', '1', 'slow.py'], { cwd: dir })).stdout,
  );
  assert.is(slow.timedOut, true);
  // Killed at its timeout: it started, never finished, and ended with the timeout's exit code.
  assert.is(slow.exitCode, 124, JSON.stringify(slow));
  assert.is(slow.stdout, 'started\n');
  const graded = JSON.parse(
    (await cli(['sandbox', 'run', '--task', 'task', '--grade', '--', 'python', 'step.py'], { cwd: dir })).stdout,
  );
  assert.equal(graded.grade, {
    ok: true,
    result: {
      score: 0.9,
      gold_threshold: 0.95,
      silver_threshold: 0.9,
      bronze_threshold: 0.8,
      median_threshold: 0.5,
      is_lower_better: false,
    },
  });
});

test('bad arguments exit 2 with a message; the process backend warns', async () => {
  const dir = await tmpProject(FILES);
  const badBackend = await cli(['sandbox', 'run', '--task', 'task', '--backend', 'vm', 'step.py'], { cwd: dir });
  assert.is(badBackend.exitCode, 2);
  assert.match(badBackend.stderr, '--backend vm: must be one of bwrap, docker, process');
  const noTask = await cli(['sandbox', 'run', '--task', 'nowhere', 'step.py'], { cwd: dir });
  assert.is(noTask.exitCode, 2);
  assert.match(noTask.stderr, 'not a task folder');
  const badTimeout = await cli(['sandbox', 'run', '--task', 'task', '--timeout', '-3', 'step.py'], { cwd: dir });
  assert.is(badTimeout.exitCode, 2);
  const proc = await cli(['sandbox', 'run', '--task', 'task', '--backend', 'process', 'step.py'], { cwd: dir });
  assert.is(proc.exitCode, 0);
  assert.match(proc.stderr, 'WITHOUT isolation');
});

test.run();
