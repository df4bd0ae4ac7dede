import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdir, mkdtemp, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { containerOptions } from './backends/docker.js';
import { copySubmission, gradeSubmission } from './evaluate.js';
import { createSandbox } from './index.js';
import { CappedOutput } from './output.js';
import { DEFAULT_LIMITS } from './types.js';
import type { JailLauncher } from './warm/jail.js';
import { WarmPool } from './warm/pool.js';
import { bwrapBackend } from './backends/bwrap.js';
import { waitFor } from '../test/helpers.js';

async function task(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'mlepipe-sbx-'));
  await mkdir(join(dir, 'public'));
  await mkdir(join(dir, 'private'));
  await writeFile(join(dir, 'public', 'train.csv'), 'id,y\n1,0\n');
  await writeFile(
    join(dir, 'private', 'evaluator.py'),
    'import argparse, json\np = argparse.ArgumentParser(); p.add_argument("--submission_path"); a = p.parse_args()\nn = len(open(a.submission_path).read().strip().split("\\n")) - 1\nprint(json.dumps({"score": n, "gold_threshold": 3, "silver_threshold": 2, "bronze_threshold": 1, "median_threshold": 0, "is_lower_better": False}))\n',
  );
  return dir;
}

test('capped output keeps the head and says how much was dropped', () => {
  const c = new CappedOutput(5);
  c.push(Buffer.from('abc'));
  c.push(Buffer.from('defgh'));
  assert.ok(c.truncated);
  assert.is(c.text(), 'abcde\n[mlepipe: output truncated, 3 more bytes]');
});

test('warm steps share no state: globals, modules and seeds are fresh each time', async () => {
  const t = await task();
  const sb = createSandbox({ backend: 'bwrap', warm: true, poolSize: 1 });
  const s = await sb.open({ task: t });
  try {
    assert.is(s.backend, 'warm-bwrap');
    await writeFile(
      join(s.workspace, 'a.py'),
      'import numpy as np, json, sys\nprint(getattr(np, "poisoned", False), np.random.rand())\nnp.poisoned = True\nsys.modules["json"].dumps = None\n',
    );
    const r1 = await s.run({ file: 'a.py' });
    const r2 = await s.run({ file: 'a.py' });
    assert.is(r1.exitCode, 0, r1.stderr);
    assert.ok(r1.stdout.startsWith('False '), r1.stdout);
    assert.ok(r2.stdout.startsWith('False '), r2.stdout);
    assert.is.not(r1.stdout, r2.stdout, 'different random draws');
    // Files do persist within a session (the agent's own work).
    await writeFile(join(s.workspace, 'b.py'), 'open("note.txt", "w").write("kept")\n');
    await s.run({ file: 'b.py' });
    await writeFile(join(s.workspace, 'c.py'), 'print(open("note.txt").read())\nraise SystemExit(3)\n');
    const r3 = await s.run({ file: 'c.py' });
    assert.is(r3.stdout.trim(), 'kept');
    assert.is(r3.exitCode, 3);
  } finally {
    await s.close();
    await sb.shutdown();
  }
});

test('a warm pool serves concurrent sessions, each seeing only its own workspace and task', async () => {
  const [t1, t2] = [await task(), await task()];
  await writeFile(join(t2, 'public', 'train.csv'), 'id,y\n9,9\n');
  const sb = createSandbox({ backend: 'bwrap', warm: true, poolSize: 2 });
  try {
    const [a, b] = await Promise.all([sb.open({ task: t1 }), sb.open({ task: t2 })]);
    assert.is.not(a.workspace, b.workspace);
    await writeFile(join(a.workspace, 'mine.txt'), 'a');
    // Each step says it started, then waits for the host's go: neither ends unless both run at once.
    const probe =
      'import os, time\nopen("started", "w").close()\nwhile not os.path.exists("go"): time.sleep(0.02)\nprint(sorted(set(os.listdir(".")) - {"started", "go"}), open("public/train.csv").read().split()[1])\n';
    await writeFile(join(a.workspace, 'p.py'), probe);
    await writeFile(join(b.workspace, 'p.py'), probe);
    const steps = Promise.all([a.run({ file: 'p.py' }), b.run({ file: 'p.py' })]);
    const started = (w: string) =>
      stat(join(w, 'started')).then(
        () => true,
        () => false,
      );
    await waitFor(
      async () => (await started(a.workspace)) && (await started(b.workspace)),
      30_000,
      'both steps to run at the same time',
    );
    await Promise.all([writeFile(join(a.workspace, 'go'), ''), writeFile(join(b.workspace, 'go'), '')]);
    const [ra, rb] = await steps;
    assert.is(ra.stdout.trim(), "['mine.txt', 'p.py', 'public'] 1,0");
    assert.is(rb.stdout.trim(), "['p.py', 'public'] 9,9");
    await Promise.all([a.close(), b.close()]);
  } finally {
    await sb.shutdown();
  }
});

test('a warm pool whose jails cannot start falls back to cold steps with a warning', async () => {
  const broken: JailLauncher = {
    kind: 'warm-bwrap',
    start: async () => {
      throw new Error('no namespaces here');
    },
  };
  const warnings: string[] = [];
  const pool = new WarmPool({
    launcher: broken,
    python: '/usr/bin/python3',
    fallback: bwrapBackend(),
    warn: (m) => warnings.push(m),
    size: 1,
  });
  const s = await pool.open({ task: await task() });
  try {
    assert.is(s.backend, 'bwrap');
    assert.match(warnings.join('\n'), 'warm executor unavailable, falling back to cold starts: no namespaces here');
    await writeFile(join(s.workspace, 'a.py'), 'print(1 + 1)\n');
    assert.is((await s.run({ file: 'a.py' })).stdout.trim(), '2');
  } finally {
    await s.close();
    await pool.shutdown();
  }
});

test('the process backend refuses to run unless chosen by name', () => {
  assert.throws(() => createSandbox({ backend: 'process' }), /without any isolation/);
  const warnings: string[] = [];
  createSandbox({ backend: 'process', explicit: true, warn: (m) => warnings.push(m) });
  assert.match(warnings[0], 'WITHOUT isolation');
});

test('the process backend still enforces the timeout and keeps ./public', async () => {
  const t = await task();
  const sb = createSandbox({ backend: 'process', explicit: true, warn: () => {} });
  const s = await sb.open({ task: t });
  try {
    await writeFile(
      join(s.workspace, 'a.py'),
      'print(open("public/train.csv").read().splitlines()[0])\nwhile True: pass\n',
    );
    const r = await s.run({ file: 'a.py' }, { timeoutMs: 1000 });
    assert.ok(r.timedOut);
    assert.is(r.stdout.trim(), 'id,y');
    assert.is(r.backend, 'process');
  } finally {
    await s.close();
  }
});

test('submissions are validated before the evaluator sees a copy', async () => {
  const t = await task();
  const ws = await mkdtemp(join(tmpdir(), 'mlepipe-ws-test-'));
  const grade = () => gradeSubmission(t, ws, { python: '/usr/bin/python3', maxBytes: 1000 });
  assert.equal(await grade(), { ok: false, error: 'no submission.csv in the workspace' });
  await writeFile(join(ws, 'submission.csv'), 'id,y\n1,0\n2\n');
  assert.match(((await grade()) as { error: string }).error, 'not a valid CSV');
  await writeFile(join(ws, 'submission.csv'), 'id,y\n' + '1,0\n'.repeat(400));
  assert.match(((await grade()) as { error: string }).error, 'the limit is 1000');
  await writeFile(join(ws, 'submission.csv'), 'id,y\n1,0\n2,1\n');
  assert.equal(await grade(), {
    ok: true,
    result: {
      score: 2,
      gold_threshold: 3,
      silver_threshold: 2,
      bronze_threshold: 1,
      median_threshold: 0,
      is_lower_better: false,
    },
  });
  await symlink(join(t, 'private', 'evaluator.py'), join(ws, 'other.csv'));
  assert.match(((await copySubmission(ws, 'other.csv', 1000)) as { error: string }).error, 'symbolic link');
  assert.match(((await copySubmission(ws, '../x.csv', 1000)) as { error: string }).error, 'outside the workspace');
});

test('docker containers: no network, no capabilities, read-only root, limits, GPUs on request', () => {
  const o = containerOptions(
    'img',
    ['python3'],
    { ...DEFAULT_LIMITS, memoryMb: 1000, maxProcs: 50, cpus: 2 },
    { ws: '/w', pub: '/p' },
    { gpus: 'all' },
  );
  const h = o.HostConfig!;
  assert.is(o.NetworkDisabled, true);
  assert.is(h.NetworkMode, 'none');
  assert.equal(h.CapDrop, ['ALL']);
  assert.is(h.ReadonlyRootfs, true);
  assert.is(h.Memory, (1000 + 512) * 1024 * 1024);
  assert.is(h.PidsLimit, 66);
  assert.is(h.NanoCpus, 2e9);
  assert.equal(h.Binds, ['/w:/workspace:rw', '/p:/workspace/public:ro']);
  assert.equal(h.DeviceRequests?.[0].Capabilities, [['gpu']]);
  assert.is(h.DeviceRequests?.[0].Count, -1);
  assert.is(o.User, '65534:65534');
  assert.equal(o.Labels, { 'mlepipe.pid': String(process.pid) });
  const remote = containerOptions('img', ['python3'], DEFAULT_LIMITS, null);
  assert.is(remote.HostConfig!.Binds, undefined);
  assert.is(remote.HostConfig!.DeviceRequests, undefined);
});

test.run();
