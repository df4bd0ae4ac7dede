// The shared tools in a warm bwrap jail, and what a tool may not read.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { join } from 'node:path';
import { toolSession } from '../test/tools-data.js';

type Row = Record<string, unknown>;
const box = await toolSession();
test.after(() => box.close());

test('discover_log_metrics: names, counts and samples, JSON lines included', async () => {
  assert.is(box.session.backend, 'warm-bwrap');
  const a = await box.call('discover_log_metrics', { path: 'public/train.log' });
  const m = Object.fromEntries((a.evidence.metrics as Row[]).map((r) => [r.name, r]));
  assert.equal([m.loss.count, m.val_acc.count, m.epoch.count], [50, 5, 50]);
  assert.equal(m.loss.samples, [1, 0.5, 0.3333, 0.25, 0.2]);
  assert.is(m.val_acc.last, 0.75);
});

test('extract_training_metric_series: values against the logged step', async () => {
  const a = await box.call('extract_training_metric_series', { path: 'public/train.log', metrics: ['val_acc'] });
  assert.equal(
    (a.evidence.series as Record<string, Row[]>).val_acc,
    [10, 20, 30, 40, 50].map((s) => ({ step: s, value: 0.5 + s / 200 })),
  );
  const missing = await box.run('extract_training_metric_series', { path: 'public/train.log', metrics: ['f1'] });
  assert.is(missing.ok, false);
  assert.match(missing.text, 'no metric f1');
});

test('verify_hyperparam_effective: lr set twice with different values, the environment read, the argparse default', async () => {
  const a = await box.call('verify_hyperparam_effective', {
    path: 'public/train.py',
    params: ['lr', 'epochs', 'dropout', 'momentum'],
  });
  const p = Object.fromEntries((a.evidence.params as Row[]).map((r) => [r.name, r]));
  assert.is(p.lr.conflicting, true);
  assert.equal(
    (p.lr.sites as Row[]).map((s) => [s.line, s.value]),
    [
      [2, 0.1],
      [6, 0.01],
    ],
  );
  assert.is(p.lr.effective_guess, 0.01);
  assert.equal(
    (p.epochs.sites as Row[]).map((s) => [s.kind, s.value]),
    [['argparse default', 5]],
  );
  assert.is(p.dropout.effective_guess, 0.2);
  assert.equal(p.momentum.sites, []);
  assert.equal(
    (a.evidence.environment_overrides as Row[]).map((e) => e.variable),
    ['BATCH'],
  );
});

test('trace_tensor_shapes: per-layer shapes of a model that fits, and where one breaks', async () => {
  const good = await box.call('trace_tensor_shapes', {
    path: 'public/model.py',
    model: 'Good',
    input_shape: [2, 3, 32, 32],
  });
  assert.equal(good.evidence.output, [2, 10]);
  assert.equal(
    (good.evidence.layers as Row[]).map((l) => [l.layer, l.output]),
    [
      ['conv', [2, 8, 32, 32]],
      ['flat', [2, 8192]],
      ['fc', [2, 10]],
    ],
  );
  const bad = await box.call('trace_tensor_shapes', {
    path: 'public/model.py',
    model: 'Bad',
    input_shape: [2, 3, 32, 32],
  });
  assert.is(bad.evidence.ok, false);
  assert.is(bad.evidence.failed_after, '1');
  assert.match(String(bad.evidence.error), '7200');
});

test('check_config_consistency: heads that do not divide the hidden size, fp16 with bf16', async () => {
  const a = await box.call('check_config_consistency', { path: 'public/config.json' });
  const failed = (a.evidence.checks as Row[]).filter((c) => !c.ok).map((c) => c.rule);
  assert.equal(failed, ['heads divide the hidden size', 'not both fp16 and bf16']);
  assert.ok((a.evidence.checks as Row[]).some((c) => c.rule === 'warmup shorter than training' && c.ok));
});

test('validate_output_format: against the sample submission', async () => {
  const a = await box.call('validate_output_format', {
    path: 'public/submission.csv',
    sample: 'public/sample_submission.csv',
  });
  assert.is(a.evidence.ok, false);
  assert.equal([a.evidence.missing_fields, a.evidence.unexpected_fields], [['label'], ['prediction']]);
  assert.match(a.text, '8 records, expected 10');
  const self = await box.call('validate_output_format', {
    path: 'public/sample_submission.csv',
    sample: 'public/sample_submission.csv',
  });
  assert.is(self.evidence.ok, true);
  const pattern = await box.call('validate_output_format', {
    path: 'public/train.csv',
    field: 'cat',
    pattern: 'c[0-9]',
  });
  assert.ok((pattern.evidence.pattern_violations as number) > 0, 'two-digit categories do not match c[0-9]');
});

test('estimate_peak_memory: a 320 MB array shows, an allocation past the cap is out of memory', async () => {
  const a = await box.call('estimate_peak_memory', { script: 'public/alloc.py', seconds: 60 });
  assert.ok((a.evidence.peak_rss_mb as number) >= 320, `peak ${a.evidence.peak_rss_mb} MB`);
  assert.equal([a.evidence.oom, a.evidence.exit_code, a.evidence.gpu_available], [false, 0, false]);
  const hog = await box.call('estimate_peak_memory', { script: 'public/hog.py', seconds: 60 });
  assert.is(hog.evidence.oom, true);
});

test("no tool reads the task's private/ files: not by a relative path, not by the host path", async () => {
  for (const path of [
    '../private/answer.csv',
    'public/../../private/answer.csv',
    join(box.task, 'private', 'answer.csv'),
    '/workspace/../private/answer.csv',
  ]) {
    const a = await box.run('detect_missing_values', { path });
    assert.is(a.ok, false, path);
    assert.not.match(JSON.stringify(a), 'SECRET');
    assert.match(a.text, /outside the workspace|no such file/);
  }
  // The memory probe runs code: even so, private/ is not in the jail.
  const { writeFile } = await import('node:fs/promises');
  const where = [join(box.task, 'private'), '/workspace/../private', '/private']
    .map((p) => JSON.stringify(p))
    .join(', ');
  await writeFile(
    join(box.session.workspace, 'peek.py'),
    `import os, sys\nprint('seen', [os.path.exists(p) for p in (${where})], 'train.csv' in os.listdir('public'), file=sys.stderr)\n`,
  );
  const peek = await box.call('estimate_peak_memory', { script: 'peek.py', seconds: 30 });
  assert.is(peek.evidence.exit_code, 0);
  assert.match(String(peek.evidence.stderr_tail), 'seen [False, False, False] True', String(peek.evidence.stderr_tail));
});

test('without a jail (the process backend) public/ is a link: tools follow it, and still not into private/', async () => {
  const { createSandbox } = await import('../sandbox/index.js');
  const { runTool } = await import('./index.js');
  const { pythonEnv } = await import('../core/python.js');
  const sandbox = createSandbox({
    backend: 'process',
    explicit: true,
    python: pythonEnv('agent').python,
    warn: () => {},
  });
  const session = await sandbox.open({ task: box.task });
  try {
    const ok = await runTool(session, 'detect_missing_values', { path: 'public/train.csv' });
    assert.is(ok.ok, true, ok.text);
    for (const path of [
      'public/../private/answer.csv',
      '../private/answer.csv',
      join(box.task, 'private', 'answer.csv'),
    ]) {
      const a = await runTool(session, 'detect_missing_values', { path });
      assert.is(a.ok, false, path);
      assert.match(a.text, 'outside the workspace');
      assert.not.match(JSON.stringify(a), 'SECRET');
    }
  } finally {
    await session.close();
    await sandbox.shutdown();
  }
});

test('a call that runs past its time limit says so', async () => {
  const { runTool } = await import('./index.js');
  const { writeFile } = await import('node:fs/promises');
  await writeFile(join(box.session.workspace, 'sleep.py'), 'import time\ntime.sleep(60)\n');
  const a = await runTool(
    box.session,
    'estimate_peak_memory',
    { script: 'sleep.py', seconds: 60 },
    { timeoutMs: 1000 },
  );
  assert.equal([a.ok, a.timedOut], [false, true]);
  assert.match(a.text, 'timed out');
});

test.run();
