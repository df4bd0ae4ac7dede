// The mltoolbench stage through the built CLI: instances of the suite built in
// the sandbox become tasks that an mlab eval solves; a rerun is all cache hits;
// a wrong template is refused at its position; a released manifest is imported,
// and one whose data is missing fails naming the instances.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { cli, tmpProject } from '../helpers.js';

const EXP = `name: suite
stages:
  suite: { uses: mltoolbench, with: { split: id, templates: [tab-titanic, graph-cora], limit: 2, runs: 2 } }
  solve: { uses: eval, needs: [suite], with: { scaffold: mlab, tools: tabular, policy: scripted:diagnose, max_turns: 8, step_timeout: 120 } }
`;

const PROBE = `import json, os
hidden = ('fault.json', 'answer.csv', 'grading.json', 'spec.json')
found = []
for base in ('.', '..', '../..', os.path.realpath('public') + '/..'):
    top = os.path.abspath(base).count(os.sep)
    for dirpath, dirs, files in os.walk(base):
        if os.path.abspath(dirpath).count(os.sep) - top >= 2 or dirpath.startswith(('/proc', '/sys', '/usr', '/dev')):
            dirs[:] = []
        found += [os.path.join(dirpath, f) for f in files if f in hidden]
opened = []
for p in ('../private/fault.json', 'public/../private/fault.json', os.path.realpath('public') + '/../private/answer.csv'):
    try:
        open(p).read()
        opened.append(p)
    except OSError:
        pass
print(json.dumps({'found': found, 'opened': opened, 'public': sorted(os.listdir('public'))}))
`;

test('two ID instances built as tasks, solved through mlab, then all cached', async () => {
  const dir = await tmpProject({ 'e.yaml': EXP });
  const r = await cli(['run', 'e.yaml'], { cwd: dir });
  assert.is(r.exitCode, 0, r.stderr + r.stdout);
  const out = (await cli(['outputs', 'e.yaml', 'suite'], { cwd: dir })).stdout.trim();
  const tasks = (await readdir(join(out, 'tasks'))).sort();
  // The first two ID instances of those templates, in manifest order.
  assert.equal(tasks, ['mltb-v1-tabular-id-03', 'mltb-v1-tabular-id-05']);
  const manifest = JSON.parse(await readFile(join(out, 'task_manifest.json'), 'utf8')) as {
    instances: Array<{ id: string; built: boolean }>;
    built: Array<{ id: string; attainable: boolean }>;
  };
  assert.is(manifest.instances.length, 115);
  assert.is(manifest.instances.filter((i) => i.built).length, 2);
  // Healthy tabular-id-05: not even the Bayes rule on what its files show passes the line (its hidden ages
  // are worth nothing more than their prior); the faulty id-03's fix does. The node says so as it ends.
  assert.equal(
    manifest.built.map((b) => [b.id, b.attainable]),
    [
      ['mltb-v1-tabular-id-03', true],
      ['mltb-v1-tabular-id-05', false],
    ],
  );
  assert.match(r.stderr + r.stdout, /suite .*out_of_reach=1\)/);
  for (const t of tasks) {
    const meta = JSON.parse(await readFile(join(out, 'tasks', t, 'task.json'), 'utf8')) as {
      generator: string;
      baseline: { runs: number };
    };
    assert.is(meta.generator, 'mltoolbench');
    assert.is(meta.baseline.runs, 2);
  }
  // From inside the jail, neither the fault's record nor the hidden answers can be found or opened.
  await writeFile(join(dir, 'probe.py'), PROBE);
  const probe = await cli(['sandbox', 'run', '--task', join(out, 'tasks', tasks[0]), 'probe.py'], { cwd: dir });
  assert.is(probe.exitCode, 0, probe.stderr);
  const step = JSON.parse(probe.stdout) as { exitCode: number; stdout: string };
  assert.is(step.exitCode, 0, probe.stdout);
  const seen = JSON.parse(step.stdout) as { found: string[]; opened: string[]; public: string[] };
  assert.equal(seen.found, []);
  assert.equal(seen.opened, []);
  assert.ok(seen.public.includes('train.py'));
  const solve = (await cli(['outputs', 'e.yaml', 'solve'], { cwd: dir })).stdout.trim();
  const runs = (await readFile(join(solve, 'results.jsonl'), 'utf8'))
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { task_id: string; success: boolean | null });
  assert.is(runs.length, 2);
  // Every task records its starter baseline, so every run has a verdict under Eq. 5.
  assert.ok(
    runs.every((x) => typeof x.success === 'boolean'),
    JSON.stringify(runs),
  );
  const again = await cli(['run', 'e.yaml'], { cwd: dir });
  assert.is(again.exitCode, 0, again.stderr);
  assert.match(again.stdout + again.stderr, /2 nodes, 2 cached, 0 to run/);
});

test('an unknown template is refused where it is written', async () => {
  const dir = await tmpProject({
    'e.yaml': 'name: bad\nstages:\n  suite: { uses: mltoolbench, with: { templates: [tab-titanc] } }\n',
  });
  const r = await cli(['validate', 'e.yaml'], { cwd: dir });
  assert.is(r.exitCode, 2);
  assert.match(r.stderr, /e\.yaml:3:\d+: .*templates.*unknown template tab-titanc/);
  assert.not.match(r.stderr, /\n\s+at /);
});

const MANIFEST = JSON.stringify({
  instances: [
    {
      instance_id: 'mltb-v1-toy-id-01',
      template_id: 'toy',
      split: 'id',
      condition: 'wrong thing',
      native_metric: 'accuracy',
      direction: 'maximize',
      starter_baseline: { mean: 0.5, std: 0.02 },
    },
    {
      instance_id: 'mltb-v1-toy-id-02',
      template_id: 'toy',
      split: 'id',
      native_metric: 'accuracy',
      direction: 'maximize',
    },
  ],
});
const TOY = {
  'data/mltb-v1-toy-id-01/public/train.csv': 'id,x,y\n1,0.1,0\n2,0.9,1\n',
  'data/mltb-v1-toy-id-01/public/test.csv': 'id,x\n3,0.2\n',
  'data/mltb-v1-toy-id-01/public/sample_submission.csv': 'id,y\n3,0\n',
  'data/mltb-v1-toy-id-01/answer.csv': 'id,y\n3,0\n',
  'data/mltb-v1-toy-id-01/test.py':
    'import json\nprint(json.dumps({"score": 1.0, "is_lower_better": False, "gold_threshold": None, "silver_threshold": None, "bronze_threshold": None, "median_threshold": None}))\n',
};

test('a released manifest is imported; missing instance data is a clear error', async () => {
  const exp =
    'name: imp\nstages:\n  suite: { uses: mltoolbench, with: { manifest: task_manifest.json, data: data, split: id } }\n';
  const broken = await tmpProject({ 'e.yaml': exp, 'task_manifest.json': MANIFEST, ...TOY });
  const r = await cli(['run', 'e.yaml'], { cwd: broken });
  assert.is(r.exitCode, 1);
  assert.match(
    r.stdout + r.stderr,
    /1 of 2 instances of task_manifest\.json have no usable data under data \(mltb-v1-toy-id-02: no folder/,
  );
  const ok = await tmpProject({
    'e.yaml': exp.replace('split: id', 'split: id, limit: 1'),
    'task_manifest.json': MANIFEST,
    ...TOY,
  });
  const r2 = await cli(['run', 'e.yaml'], { cwd: ok });
  assert.is(r2.exitCode, 0, r2.stderr);
  const out = (await cli(['outputs', 'e.yaml', 'suite'], { cwd: ok })).stdout.trim();
  const task = join(out, 'tasks', 'mltb-v1-toy-id-01');
  assert.equal((await readdir(join(task, 'public'))).sort(), ['sample_submission.csv', 'test.csv', 'train.csv']);
  assert.ok((await readdir(join(task, 'private'))).includes('evaluator.py'));
  const spec = JSON.parse(await readFile(join(task, 'private', 'spec.json'), 'utf8')) as { starter_score: number };
  assert.is(spec.starter_score, 0.5);
  const meta = JSON.parse(await readFile(join(task, 'task.json'), 'utf8')) as Record<string, unknown>;
  assert.is(meta.is_lower_better, false);
  // The author-side condition is kept private.
  assert.not.ok(JSON.stringify(meta).includes('wrong thing'));
});

test.run();
