// The main flow through the built CLI: run, rerun from cache, overrides that
// rerun exactly what they touch, plan/status/diff/report/outputs.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync } from 'node:fs';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { cli, tmpProject } from '../helpers.js';

// Each node appends its id to runs.log, so the test sees exactly what ran.
const EXP = `name: flow
vars: { n: 3 }
stages:
  data:
    uses: shell
    with:
      run: |
        echo data >> runs.log
        seq 1 \${vars.n} > $MLEPIPE_OUT/rows.txt
        printf '{"rows": %d}' \${vars.n} > $MLEPIPE_OUT/metrics.json
  train:
    uses: shell
    needs: [data]
    with:
      run: |
        echo "train $MLEPIPE_NODE" >> runs.log
        lr=$(echo "$MLEPIPE_PARAMS" | sed 's/.*"lr":\\([0-9]*\\).*/\\1/')
        printf '{"score": %d}' $(( $(wc -l < $MLEPIPE_IN_DATA/rows.txt) * lr )) > $MLEPIPE_OUT/metrics.json
      params: { lr: 1 }
  side:
    uses: shell
    needs: [data]
    with:
      run: |
        echo side >> runs.log
        echo '{"ok": true}' > $MLEPIPE_OUT/metrics.json
  lrs: { uses: ablate, target: train, matrix: { params.lr: [1, 2] } }
tables:
  scores: { from: train, columns: [score] }
`;

async function runs(dir: string): Promise<string[]> {
  const text = await readFile(join(dir, 'runs.log'), 'utf8').catch(() => '');
  const lines = text.trim().split('\n').filter(Boolean);
  await writeFile(join(dir, 'runs.log'), '');
  return lines.sort();
}

test('run, then rerun all cached', async () => {
  const dir = await tmpProject({ 'e.yaml': EXP });
  const first = await cli(['run', 'e.yaml'], { cwd: dir });
  assert.is(first.exitCode, 0, first.stderr);
  assert.equal(await runs(dir), ['data', 'side', 'train train@params.lr=1', 'train train@params.lr=2']);
  assert.match(first.stderr, '✔ train@params.lr=2');
  assert.match(first.stderr, 'done: 5 ran, 0 cached, 0 failed');

  const again = await cli(['run', 'e.yaml'], { cwd: dir });
  assert.is(again.exitCode, 0);
  assert.equal(await runs(dir), []);
  assert.match(again.stderr, 'done: 0 ran, 5 cached, 0 failed');
  assert.is((await cli(['status', 'e.yaml'], { cwd: dir })).exitCode, 0);

  const lock = JSON.parse(await readFile(join(dir, 'e.lock.json'), 'utf8'));
  assert.equal(Object.keys(lock.nodes).sort(), ['data', 'lrs', 'side', 'train@params.lr=1', 'train@params.lr=2']);
  assert.equal(lock.nodes['train@params.lr=2'].metrics, { score: 6 });
});

test('-S override reruns exactly the nodes downstream of it', async () => {
  const dir = await tmpProject({ 'e.yaml': EXP });
  assert.is((await cli(['run', 'e.yaml'], { cwd: dir })).exitCode, 0);
  await runs(dir);
  const plan = JSON.parse(
    (await cli(['plan', 'e.yaml', '--json', '-S', 'stages.side.with.run=echo side2 >> runs.log'], { cwd: dir })).stdout,
  );
  const actions = Object.fromEntries(
    plan.nodes.map((n: { id: string; action: string; reason: string }) => [n.id, `${n.action}: ${n.reason}`]),
  );
  assert.equal(actions, {
    data: 'cached: cached',
    'train@params.lr=1': 'cached: cached',
    'train@params.lr=2': 'cached: cached',
    side: 'run: params changed: run',
    lrs: 'cached: cached',
  });
  const status = await cli(['status', 'e.yaml', '-S', 'vars.n=4'], { cwd: dir });
  assert.is(status.exitCode, 1);
  assert.match(status.stdout, 'data: params changed: run');
  assert.match(status.stdout, 'train@params.lr=1: input changed: data');

  const r = await cli(['run', 'e.yaml', '-S', 'stages.train.with.params.lr=5'], { cwd: dir });
  assert.is(r.exitCode, 0, r.stderr);
  // lr is the ablated key, so the matrix still sets 1 and 2: nothing changes.
  assert.equal(await runs(dir), []);
  const r2 = await cli(['run', 'e.yaml', '-S', 'vars.n=4'], { cwd: dir });
  assert.is(r2.exitCode, 0, r2.stderr);
  assert.equal(await runs(dir), ['data', 'side', 'train train@params.lr=1', 'train train@params.lr=2']);
});

test('report renders tables from metrics (text, json, csv, md)', async () => {
  const dir = await tmpProject({ 'e.yaml': EXP });
  assert.is((await cli(['run', 'e.yaml'], { cwd: dir })).exitCode, 0);
  const json = JSON.parse((await cli(['report', 'e.yaml', '--json'], { cwd: dir })).stdout);
  assert.equal(json, {
    tables: {
      scores: {
        columns: ['variant', 'score'],
        rows: [
          { variant: 'params.lr=1', score: 3 },
          { variant: 'params.lr=2', score: 6 },
        ],
      },
    },
    figures: {},
  });
  assert.is(
    (await cli(['report', 'e.yaml', '--csv'], { cwd: dir })).stdout.trim(),
    'variant,score\nparams.lr=1,3\nparams.lr=2,6',
  );
  assert.match((await cli(['report', 'e.yaml', '--md'], { cwd: dir })).stdout, '| params.lr=2 | 6 |');
  assert.match((await cli(['report', 'e.yaml'], { cwd: dir })).stdout, /params\.lr=2\s+6/);
});

test('diff: parameters, touched nodes, metrics side by side', async () => {
  const dir = await tmpProject({
    'e.yaml': EXP,
    'f.yaml': EXP.replace('name: flow', 'name: flow2').replace('vars: { n: 3 }', 'vars: { n: 5 }'),
  });
  assert.is((await cli(['run', 'e.yaml'], { cwd: dir })).exitCode, 0);
  assert.is((await cli(['run', 'f.yaml'], { cwd: dir })).exitCode, 0);
  const d = JSON.parse((await cli(['diff', 'e.yaml', 'f.yaml', '--json'], { cwd: dir })).stdout);
  assert.equal(
    d.written.map((w: { path: string; a: unknown; b: unknown }) => [w.path, w.a, w.b]),
    [
      ['name', 'flow', 'flow2'],
      ['vars.n', 3, 5],
    ],
  );
  assert.equal(
    d.params.map((p: { path: string }) => p.path),
    ['stages.data.with.run'],
  );
  const status = Object.fromEntries(d.nodes.map((n: { id: string; status: string }) => [n.id, n.status]));
  assert.equal(status, {
    data: 'changed',
    'train@params.lr=1': 'changed',
    'train@params.lr=2': 'changed',
    side: 'changed',
    lrs: 'changed',
  });
  const score2 = d.metrics.find(
    (m: { node: string; metric: string }) => m.node === 'train@params.lr=2' && m.metric === 'score',
  );
  assert.equal(score2, { node: 'train@params.lr=2', metric: 'score', a: 6, b: 10, delta: 4 });
  const text = await cli(['diff', 'e.yaml', 'f.yaml'], { cwd: dir });
  assert.match(text.stdout, 'parameters (1 differ)');
  assert.match(text.stdout, 'nodes (5 of 5 affected)');
  const md = await cli(['diff', 'e.yaml', 'f.yaml', '--md'], { cwd: dir });
  assert.match(md.stdout, '| train@params.lr=2 | score | 6 | 10 | 4 |');
});

test('outputs prints the entry folder; --only, --force and --keep-going', async () => {
  const dir = await tmpProject({ 'e.yaml': EXP });
  const only = await cli(['run', 'e.yaml', '--only', 'side'], { cwd: dir });
  assert.is(only.exitCode, 0, only.stderr);
  assert.equal(await runs(dir), ['data', 'side']);
  const out = await cli(['outputs', 'e.yaml', 'data'], { cwd: dir });
  assert.is(out.exitCode, 0);
  assert.is((await readFile(join(out.stdout.trim(), 'rows.txt'), 'utf8')).trim(), '1\n2\n3');
  const notYet = await cli(['outputs', 'e.yaml', 'train@params.lr=1'], { cwd: dir });
  assert.is(notYet.exitCode, 1);
  assert.match(notYet.stderr, 'has not run');

  assert.is((await cli(['run', 'e.yaml'], { cwd: dir })).exitCode, 0);
  await runs(dir);
  assert.is((await cli(['run', 'e.yaml', '--force=side'], { cwd: dir })).exitCode, 0);
  assert.equal(await runs(dir), ['side']);
  assert.is((await cli(['run', 'e.yaml', '--force'], { cwd: dir })).exitCode, 0);
  assert.is((await runs(dir)).length, 4);

  // A failing node: without --keep-going nothing new starts; with it, only its dependents are skipped.
  const failing = EXP.replace('echo side >> runs.log\n', 'echo side >> runs.log\n        exit 3\n');
  await writeFile(
    join(dir, 'g.yaml'),
    failing.replace('name: flow', 'name: g').replace('vars: { n: 3 }', 'vars: { n: 7 }'),
  );
  const stop = await cli(['run', 'g.yaml', '-j', '1'], { cwd: dir });
  assert.is(stop.exitCode, 1);
  assert.match(stop.stderr, '✖ side');
  assert.match(stop.stderr, 'command exited with code 3');
  assert.match(stop.stderr, 'full log:');
  assert.match(stop.stderr, /- lrs\s+skipped: not started: an earlier node failed/);
  const going = await cli(['run', 'g.yaml', '-j', '1', '--keep-going'], { cwd: dir });
  assert.is(going.exitCode, 1);
  assert.match(going.stderr, '✖ side');
  assert.match(going.stderr, '✔ lrs');
  assert.match(going.stderr, 'failed: 1 ran, 3 cached, 1 failed');
});

test('cache ls and gc keep what a lock file references', async () => {
  const dir = await tmpProject({ 'e.yaml': EXP });
  assert.is((await cli(['run', 'e.yaml'], { cwd: dir })).exitCode, 0);
  assert.is((await cli(['run', 'e.yaml', '-S', 'vars.n=9'], { cwd: dir })).exitCode, 0);
  const ls = JSON.parse((await cli(['cache', 'ls', '--json'], { cwd: dir })).stdout);
  assert.is(ls.entries.length, 10);
  assert.is(ls.entries.filter((e: { referencedBy: string[] }) => e.referencedBy.length).length, 5);
  const dry = await cli(['cache', 'gc', '--dry-run'], { cwd: dir });
  assert.match(dry.stdout, 'would remove 5 entries');
  assert.is(JSON.parse((await cli(['cache', 'ls', '--json'], { cwd: dir })).stdout).entries.length, 10);
  assert.ok((await readdir(join(dir, '.mlepipe', 'parsed'))).length > 0, 'runs stored the parse of e.yaml');
  const gc = await cli(['cache', 'gc'], { cwd: dir });
  assert.match(gc.stdout, 'removed 5 entries');
  // Stored parses are a speed-up only: gc drops them, and the next command parses again.
  assert.not.ok(existsSync(join(dir, '.mlepipe', 'parsed')));
  assert.is((await cli(['status', 'e.yaml', '-S', 'vars.n=9'], { cwd: dir })).exitCode, 0);
  assert.is((await cli(['status', 'e.yaml'], { cwd: dir })).exitCode, 1);
});

test('reward CLI and validate', async () => {
  const dir = await tmpProject({ 'e.yaml': EXP });
  const r = await cli(
    [
      'reward',
      '0.1*format + 0.3*execute + 0.1*median + 0.2*bronze + 0.2*silver + 0.1*gold',
      '--vars',
      'format=1,execute=1,median=1',
    ],
    { cwd: dir },
  );
  assert.is(r.stdout.trim(), '0.5');
  assert.is(
    (await cli(['reward', 'sandmle-code', '--vars', 'format=1,execute=1,gold=1'], { cwd: dir })).stdout.trim(),
    '1',
  );
  const bad = await cli(['reward', 'gold', '--vars', 'gld=1'], { cwd: dir });
  assert.is(bad.exitCode, 2);
  // Every preset's formula starts in the same column, however long its name.
  const presets = (await cli(['reward', '--list'], { cwd: dir })).stdout.split('\n').filter((l) => /^\S+ +\S/.test(l));
  assert.ok(presets.some((l) => l.startsWith('sandmle-release ')));
  const starts = presets.filter((l) => !l.startsWith('variables:')).map((l) => /^\S+ +/.exec(l)![0].length);
  assert.ok(starts.length >= 5);
  assert.equal(new Set(starts).size, 1, presets.join('\n'));
  const v = await cli(['validate', 'e.yaml'], { cwd: dir });
  assert.is(v.stdout.trim(), 'e.yaml: ok (4 stages, 5 nodes)');
});

test.run();
