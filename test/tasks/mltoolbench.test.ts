// The MLToolBench-style suite's generator: the manifest's shape (80/25/10 after
// the paper's index), determinism of a built instance's bytes, what the agent
// can see (no fault metadata, no hidden answers), and the task's own evaluator
// on the starter's submission, on a sample and on broken submissions.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execa } from 'execa';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { listFiles } from '../../core/fs.js';
import { selectInstances, suiteInstances } from '../../tasks/mltoolbench.js';
import { NULL_FAULT, PARTITION_CHECK, PY, py, pyJson, REDRAW, suite, type PartitionCut } from './mltoolbench-python.js';

test('the manifest: 115 instances, 16/5/2 per domain, 20 templates with 4 configurations each, OOD templates unseen', async () => {
  const all = suiteInstances();
  assert.is(all.length, 115);
  assert.is(new Set(all.map((i) => i.id)).size, 115);
  const count = (split: string) => all.filter((i) => i.split === split).length;
  assert.equal([count('train'), count('id'), count('ood')], [80, 25, 10]);
  for (const d of ['cv', 'nlp', 'tabular', 'time_series', 'graph']) {
    const of = all.filter((i) => i.domain === d);
    assert.equal(
      [
        of.filter((i) => i.split === 'train').length,
        of.filter((i) => i.split === 'id').length,
        of.filter((i) => i.split === 'ood').length,
      ],
      [16, 5, 2],
      d,
    );
  }
  const train = all.filter((i) => i.split === 'train');
  const templates = [...new Set(train.map((i) => i.template))];
  assert.is(templates.length, 20);
  for (const t of templates) {
    const configs = train.filter((i) => i.template === t).map((i) => i.config);
    assert.is(configs.length, 4, t);
    assert.ok(configs.includes('healthy'), t);
    assert.is(new Set(configs).size, 4, t);
  }
  for (const i of all.filter((x) => x.split === 'id')) assert.ok(templates.includes(i.template), i.id);
  for (const i of all.filter((x) => x.split === 'ood')) assert.not.ok(templates.includes(i.template), i.id);
  // The Python side reads the same list and knows every template it names.
  const r = await suite(['manifest']);
  assert.is(r.exitCode, 0, r.stderr);
  const py = JSON.parse(r.stdout) as { instances: Array<{ id: string; metric: string }> };
  assert.equal(
    py.instances.map((i) => i.id),
    all.map((i) => i.id),
  );
  assert.equal(
    selectInstances({ split: 'ood', domains: ['graph'] }).map((i) => i.template),
    ['graph-bbbp', 'graph-bace'],
  );
});

test('no starter holds a comment on or beside a line a fault changes, and a template that does is refused', async () => {
  const all = await py(
    'import json\nfrom mltoolbench import cli\nfrom mltoolbench.core import TEMPLATES, comment_tells\nprint(json.dumps({n: comment_tells(t) for n, t in TEMPLATES.items()}))',
  );
  assert.is(all.exitCode, 0, all.stderr);
  const tells = JSON.parse(all.stdout) as Record<string, unknown[]>;
  assert.is(Object.keys(tells).length, 30);
  assert.equal(
    Object.entries(tells).filter(([, v]) => v.length),
    [],
  );
  // cv-id-02's old starter: a comment saying every class keeps the same share, above the line that does not.
  const planted = [
    'from mltoolbench.core import Template, register',
    "code = 'x = 1\\n# the same share for every class\\nkeep = rng.random(n) < 0.9\\n'",
    "register(Template('t', 'vision', 's', 'o', 'accuracy', False, None, code, {'rare class sampling': [('keep = rng.random(n) < 0.9', 'keep = rng.random(n) < np.where(y < 3, 0.08, 0.9)')]}))",
  ].join('\n');
  const r = await py(planted);
  assert.is.not(r.exitCode, 0);
  assert.match(
    r.stderr,
    /a comment near a fault tells the configuration: rare class sampling line 2: # the same share for every class/,
  );
});

let out = '';
const IDS = ['cv-id-01', 'tabular-train-02', 'time_series-id-03'];

test('same seed, same bytes: two builds of an instance are identical file for file', async () => {
  out = await mkdtemp(join(tmpdir(), 'mltb-'));
  for (const dir of ['a', 'b']) {
    // The second build reads the attainability check's fix scores from the cache the first wrote.
    const r = await suite(['build', ...IDS, '--out', join(out, dir), '--runs', '2', '--cache', join(out, 'cache')]);
    assert.is(r.exitCode, 0, r.stderr);
  }
  for (const id of IDS) {
    const a = await listFiles(join(out, 'a', `mltb-v1-${id}`));
    const b = await listFiles(join(out, 'b', `mltb-v1-${id}`));
    assert.ok(a.length > 5, id);
    assert.equal(
      a.map((f) => [f.path, f.sha256]),
      b.map((f) => [f.path, f.sha256]),
      id,
    );
  }
  // Another generation seed gives other data.
  const r = await suite(['build', 'tabular-train-02', '--seed', '7', '--out', join(out, 'c'), '--runs', '1']);
  assert.is(r.exitCode, 0, r.stderr);
  const train = (d: string) => readFile(join(out, d, 'mltb-v1-tabular-train-02', 'public', 'train.csv'), 'utf8');
  assert.is.not(await train('c'), await train('a'));
});

test('attainability: each build records that its fix clears Eq. 5 on the baseline seeds, and draws the next seed when it does not', async () => {
  assert.is((await readdir(join(out, 'cache'))).length, IDS.length);
  for (const id of IDS) {
    const task = join(out, 'a', `mltb-v1-${id}`);
    const rec = JSON.parse(await readFile(join(task, 'private', 'attainability.json'), 'utf8')) as {
      seeds: number;
      tries: Array<{ starter: number; reference: number; line: number; passed: boolean }>;
    };
    const meta = JSON.parse(await readFile(join(task, 'task.json'), 'utf8')) as {
      seed: number;
      is_lower_better: boolean;
      generation: { registered_seed: number; seed: number; redrawn: number };
    };
    assert.is(rec.seeds, 2);
    const last = rec.tries[rec.tries.length - 1];
    assert.ok(
      last.passed && (meta.is_lower_better ? last.reference < last.line : last.reference > last.line),
      `${id}: ${JSON.stringify(last)}`,
    );
    assert.equal(meta.generation, {
      registered_seed: meta.generation.registered_seed,
      seed: meta.seed,
      redrawn: rec.tries.length - 1,
    });
  }
  // A fault too small to matter on any seed: the build tries three seeds, then fails naming them.
  const none = await py([...NULL_FAULT, 'build(inst, tempfile.mkdtemp(), runs=2)'].join('\n'));
  assert.is.not(none.exitCode, 0);
  assert.match(
    none.stderr,
    /x: Eq\. 5 is out of reach on every seed tried: \[\{"seed": 5,.*\{"seed": 6,.*\{"seed": 7,.*"passed": false\}\]/,
  );
  // A check that fails on the registered seed only: the instance is drawn from the next one, and that is recorded.
  const redraw = await py([...NULL_FAULT, ...REDRAW].join('\n'));
  assert.is(redraw.exitCode, 0, redraw.stderr);
  const [gen, tries] = JSON.parse(redraw.stdout) as [
    Record<string, number>,
    Array<{ seed: number; passed: boolean; reference: null }>,
  ];
  assert.equal(gen, { registered_seed: 22009, seed: 22010, redrawn: 1 });
  assert.equal(
    tries.map((t) => [t.seed, t.passed, t.reference]),
    [
      [22009, false, null],
      [22010, true, null],
    ],
  );
  // A healthy starter already within 10% of the metric's best (graph-clrs solves BFS exactly): no seed
  // repairs it, so the instance is kept from its registered seed and marked as out of reach.
  const perfect = await suite(['build', 'graph-train-13', '--out', join(out, 'perfect'), '--runs', '1']);
  assert.is(perfect.exitCode, 0, perfect.stderr);
  const task = join(out, 'perfect', 'mltb-v1-graph-train-13');
  const rec = JSON.parse(await readFile(join(task, 'private', 'attainability.json'), 'utf8')) as {
    attainable: boolean;
    tries: Array<{ seed: number; line: number; oracle: number; passed: boolean }>;
  };
  assert.is(rec.attainable, false);
  assert.equal(
    rec.tries.map((t) => [t.seed, t.passed]),
    [
      [14030, false],
      [14031, false],
      [14032, false],
    ],
  );
  assert.ok(rec.tries.every((t) => t.line > 1));
  // The oracle (the BFS distances themselves) scores 1: the bound, not the data, puts the line out of reach.
  assert.ok(
    rec.tries.every((t) => t.oracle === 1),
    JSON.stringify(rec.tries),
  );
  const meta = JSON.parse(await readFile(join(task, 'task.json'), 'utf8')) as {
    seed: number;
    generation: Record<string, number>;
  };
  assert.equal(meta.generation, { registered_seed: 14030, seed: 14030, redrawn: 0 });
});

test('App. F partitions: the held-out rows cut into public validation and hidden test by unit (id, group, or time block with an embargo), never across', async () => {
  // Every template, from a seed of its own: what the split keeps apart, read back from the partition's output.
  const all = await pyJson<Record<string, PartitionCut>>(PARTITION_CHECK);
  assert.is(Object.keys(all).length, 30);
  for (const [name, p] of Object.entries(all)) {
    const [nValid, nTest, shared, nAll] = p.answer_ids;
    assert.is(shared, 0, `${name}: an answer id in both partitions`);
    assert.ok(nValid > 0 && nTest > 0, `${name}: ${nValid} / ${nTest}`);
    assert.ok(p.answers_kept && p.sample_rows, `${name}: the answers or the sample moved`);
    assert.equal(
      p.valid.filter((u) => p.test.includes(u)),
      [],
      `${name}: a unit in both partitions`,
    );
    // A group of the fitting rows never reappears in a held-out partition (where the fitting rows carry the group).
    assert.equal(
      [...p.valid, ...p.test].filter((u) => p.fit_units.includes(u)),
      [],
      `${name}: a unit fit on and held out`,
    );
    assert.ok(Math.abs(p.valid.length - p.test.length) <= 1, `${name}: ${p.valid.length} / ${p.test.length} units`);
    if (p.chronological) {
      // In the test table's order: an embargo, the validation block, an embargo, the test block.
      const e = p.embargo;
      assert.equal(p.valid, p.held_out.slice(e, e + p.valid.length), name);
      assert.equal(p.test, p.held_out.slice(2 * e + p.valid.length), name);
      assert.ok(e >= 1, name);
    } else assert.ok(nValid + nTest === nAll, `${name}: every held-out answer is in one partition`);
  }
  assert.match(
    all['ts-etth-forecast'].policy,
    /one window \(48\+12 steps, lookback plus horizon\) dropped before each block/,
  );
  assert.match(all['nlp-textnorm'].policy, /grouped by sentence/);
  assert.match(all['graph-cora'].policy, /labelled node sets are disjoint/);
  // A built instance: the validation files are public and named in the prompt, and task.json records the cut.
  const task = join(out, 'a', 'mltb-v1-time_series-id-03');
  const names = (await listFiles(join(task, 'public'))).map((f) => f.path);
  assert.ok(names.includes('valid.csv') && names.includes('valid_answers.csv'), names.join(' '));
  const text = await readFile(join(task, 'public', 'description.md'), 'utf8');
  assert.match(
    text,
    /^SPLIT POLICY: fit on the training files and validate on `public\/valid\.csv` \(the same format as `public\/test\.csv`\), whose true values are in `public\/valid_answers\.csv`/m,
  );
  const meta = JSON.parse(await readFile(join(task, 'task.json'), 'utf8')) as {
    partition: { units: Record<string, number>; rows: Record<string, number> };
  };
  const hidden = (await readFile(join(task, 'private', 'answer.csv'), 'utf8')).trim().split('\n').length - 1;
  const shown = (await readFile(join(task, 'public', 'valid_answers.csv'), 'utf8')).trim().split('\n').length - 1;
  assert.equal(meta.partition.rows, { valid: shown, test: hidden });
  assert.ok(meta.partition.units.dropped > 0, JSON.stringify(meta.partition));
});

test("the Bayes oracle: every template's, in the submission's format, grades better than the sample; a healthy instance it cannot pass is out of reach", async () => {
  const check = [
    'import json, os, tempfile',
    'import numpy as np',
    'from mltoolbench import cli',
    'from mltoolbench.core import TEMPLATES, _write_frame, _grade_fn',
    'grade, out = _grade_fn(), {}',
    'for name, t in TEMPLATES.items():',
    '    data = t.make(np.random.default_rng(43))',
    '    o, s, idc = data["oracle"], data["sample"], data["grading"]["id"]',
    '    d = tempfile.mkdtemp()',
    '    _write_frame(data["answer"], os.path.join(d, "answer.csv"))',
    '    json.dump(dict(data["grading"], is_lower_better=t.lower), open(os.path.join(d, "grading.json"), "w"))',
    '    score = lambda f: (_write_frame(f, os.path.join(d, "sub.csv")), grade(os.path.join(d, "sub.csv"), d)[0])[1]',
    '    out[name] = {"format": list(o.columns) == list(s.columns) and o[idc].tolist() == data["answer"][idc].tolist(), "lower": t.lower, "oracle": score(o), "sample": score(s)}',
    'print(json.dumps(out))',
  ];
  const all = await pyJson<Record<string, { format: boolean; lower: boolean; oracle: number; sample: number }>>(check);
  assert.is(Object.keys(all).length, 30);
  for (const [name, o] of Object.entries(all)) {
    assert.ok(o.format, `${name}: the oracle is not a submission of the hidden rows`);
    assert.ok(o.lower ? o.oracle < o.sample : o.oracle > o.sample, `${name}: oracle ${o.oracle}, sample ${o.sample}`);
  }
  // The ventilator's starter already sits at the noise floor its generator draws (MAE of N(0, 0.1)):
  // the line is within the metric's range, but not even the oracle passes it.
  const floor = await suite(['build', 'time_series-train-13', '--out', join(out, 'floor'), '--runs', '2']);
  assert.is(floor.exitCode, 0, floor.stderr);
  const rec = JSON.parse(
    await readFile(join(out, 'floor', 'mltb-v1-time_series-train-13', 'private', 'attainability.json'), 'utf8'),
  ) as { attainable: boolean; tries: Array<{ bound: boolean; oracle: number; line: number; passed: boolean }> };
  assert.is(rec.attainable, false);
  assert.is(rec.tries.length, 3);
  for (const t of rec.tries) assert.ok(t.bound && !t.passed && t.oracle > t.line, JSON.stringify(t));
});

test('the agent side holds no fault metadata and no hidden answers', async () => {
  for (const id of IDS) {
    const task = join(out, 'a', `mltb-v1-${id}`);
    const fault = JSON.parse(await readFile(join(task, 'private', 'fault.json'), 'utf8')) as {
      config: string;
      fix: unknown[];
    };
    assert.is.not(fault.config, 'healthy');
    assert.ok(fault.fix.length > 0);
    const pub = await listFiles(join(task, 'public'));
    const names = pub.map((f) => f.path);
    for (const hidden of ['fault.json', 'answer.csv', 'grading.json', 'spec.json', 'evaluator.py'])
      assert.not.ok(
        names.some((n) => n.endsWith(hidden)),
        `${id}: ${hidden}`,
      );
    const words = [
      fault.config,
      fault.config.replace(/ /g, '_'),
      fault.config.replace(/ /g, '-'),
      'healthy',
      'fault',
      'faulty',
      'inject',
    ];
    for (const f of pub.filter((x) => !x.path.endsWith('.png'))) {
      const text = (await readFile(join(task, 'public', f.path), 'utf8')).toLowerCase();
      for (const w of words) assert.not.ok(new RegExp(`\\b${w}\\b`).test(text), `${id}: public/${f.path} names "${w}"`);
    }
    // task.json sits beside public/ but holds neither the configuration nor the fix.
    const taskJson = await readFile(join(task, 'task.json'), 'utf8');
    assert.not.ok(taskJson.includes(fault.config), id);
  }
});

test("description.md is the task prompt: every field, the starter's measured baseline and Eq. 5's line from the grading thresholds", async () => {
  for (const id of IDS) {
    const task = join(out, 'a', `mltb-v1-${id}`);
    const text = await readFile(join(task, 'public', 'description.md'), 'utf8');
    const fields = [
      'TASK ID',
      'TASK DOMAIN',
      'OBJECTIVE',
      'WORKSPACE',
      'STARTER FILES',
      'DATA',
      'SPLIT POLICY',
      'METRIC',
      'BASELINE',
      'SUCCESS RULE',
      'REQUIRED ARTIFACT',
      'EDIT CONSTRAINTS',
      'RESOURCE BUDGET',
    ];
    assert.equal(
      text
        .split('\n')
        .filter((l) => /^[A-Z ]+: /.test(l))
        .map((l) => l.split(':')[0]),
      fields,
      id,
    );
    assert.match(text, new RegExp(`^TASK ID: mltb-v1-${id}$`, 'm'));
    const meta = JSON.parse(await readFile(join(task, 'task.json'), 'utf8')) as {
      baseline: { mean: number; runs: number };
    };
    const grading = JSON.parse(await readFile(join(task, 'private', 'grading.json'), 'utf8')) as {
      thresholds: { bronze_threshold: number };
    };
    const baseline = Number(
      /^BASELINE: the starter scores (\S+) on the hidden test split \(mean over seeds 0-1,/m.exec(text)?.[1],
    );
    assert.ok(
      Math.abs(baseline - meta.baseline.mean) <= 1e-5 * Math.max(1, Math.abs(meta.baseline.mean)),
      `${id}: ${baseline} vs ${meta.baseline.mean}`,
    );
    const line = Number(/max\(0\.1 \* \|baseline\|, 0\.01\), i\.e\. (?:above|below) (\S+)\.$/m.exec(text)?.[1]);
    assert.ok(
      Math.abs(line - grading.thresholds.bronze_threshold) <= 1e-5 * Math.max(1, Math.abs(line)),
      `${id}: ${line} vs ${grading.thresholds.bronze_threshold}`,
    );
  }
});

test("the task's evaluator grades the starter's own submission to the recorded seed-0 score, and refuses broken ones", async () => {
  const task = join(out, 'a', 'mltb-v1-tabular-train-02');
  const meta = JSON.parse(await readFile(join(task, 'task.json'), 'utf8')) as {
    baseline: { mean: number; std: number; runs: number; scores: number[] };
    is_lower_better: boolean;
  };
  assert.is(meta.baseline.runs, 2);
  assert.is(meta.baseline.scores.length, 2);
  const ran = await execa(PY, ['public/train.py', '--seed', '0', '--out', join(out, 'sub.csv')], {
    cwd: task,
    reject: false,
  });
  assert.is(ran.exitCode, 0, ran.stderr);
  const grade = async (sub: string) =>
    JSON.parse(
      (
        await execa(PY, [join(task, 'private', 'evaluator.py'), '--submission_path', sub], {
          cwd: join(task, 'private'),
        })
      ).stdout,
    ) as Record<string, unknown>;
  const g = await grade(join(out, 'sub.csv'));
  assert.is(g.score, meta.baseline.scores[0]);
  assert.is(g.is_lower_better, true);
  assert.is(g.median_threshold, meta.baseline.mean);
  assert.ok((g.bronze_threshold as number) < meta.baseline.mean);
  assert.type((await grade(join(task, 'public', 'sample_submission.csv'))).score, 'number');
  const lines = (await readFile(join(out, 'sub.csv'), 'utf8')).trim().split('\n');
  await writeFile(join(out, 'short.csv'), lines.slice(0, -3).join('\n') + '\n');
  assert.match(String((await grade(join(out, 'short.csv'))).error), /ids differ/);
  await writeFile(
    join(out, 'nan.csv'),
    [lines[0], ...lines.slice(1).map((l, i) => (i === 0 ? l.replace(/,[^,]*$/, ',nan') : l))].join('\n') + '\n',
  );
  assert.match(String((await grade(join(out, 'nan.csv'))).error), /missing, non-numeric or infinite/);
  assert.match(String((await grade(join(out, 'absent.csv'))).error), /missing or empty/);
});

test.after(async () => {
  if (out) await rm(out, { recursive: true, force: true });
});

test.run();
