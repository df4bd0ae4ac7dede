// Guidance: the procedural writer on a task's own records gives Table 9's
// structure with tools that exist and arguments they accept, never the fix's
// replacement text; the checker refuses unknown tools and bad arguments; a
// model's answer that fails goes back with its problems and the retry is used.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startReplayServer } from '../../test/llm/replay-server.js';
import { LlmClient } from '../llm/client.js';
import { guidanceProblems, readTaskFacts, renderGuidance } from './index.js';
import { askGuidance } from './llm.js';
import { assetText } from '../../core/assets.js';
import { proceduralGuidance, RULES } from './procedural.js';
import { resolveModel } from '../../core/models.js';

const STARTER =
  "train = pd.read_csv('public/train.csv')\nytr = train['survived']\nXtr, Xte = Xtr, Xte\nmodel = SVC(C=1.0, probability=True)\n";

async function taskDir(config: string, fix: Array<{ find: string; replace: string }>): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'mlepipe-guide-'));
  await mkdir(join(dir, 'public'));
  await mkdir(join(dir, 'private'));
  await writeFile(
    join(dir, 'task.json'),
    JSON.stringify({
      id: 't1',
      domain: 'tabular',
      template: 'tab-titanic',
      metric: 'accuracy',
      is_lower_better: false,
      baseline: { mean: 0.5233, std: 0.012, runs: 10 },
    }),
  );
  await writeFile(join(dir, 'private', 'fault.json'), JSON.stringify({ config, fault: config, fix }));
  await writeFile(join(dir, 'public', 'train.py'), STARTER);
  await writeFile(join(dir, 'public', 'train.csv'), 'age,fare,survived\n1,2,0\n');
  await writeFile(join(dir, 'public', 'description.md'), '# Titanic\n');
  return dir;
}

test('procedural guidance: valid, grounded in the task, no replacement text', async () => {
  const fix = [{ find: 'Xtr, Xte = Xtr, Xte', replace: 'Xtr, Xte = scaler.transform(Xtr), scaler.transform(Xte)' }];
  const dir = await taskDir('unscaled features', fix);
  try {
    const facts = readTaskFacts(dir, 't1');
    assert.is(facts.config, 'unscaled features');
    assert.equal(facts.baseline, { mean: 0.5233, std: 0.012, runs: 10 });
    const g = proceduralGuidance(facts);
    assert.equal(guidanceProblems(g), []);
    // The label column read off the starter reaches the imbalance check.
    assert.equal(
      g.inspect.map((c) => c.tool),
      ['detect_missing_values', 'check_feature_normalization', 'detect_label_imbalance'],
    );
    assert.equal(g.inspect[2].args, { path: 'public/train.csv', target: 'survived' });
    assert.ok(
      g.act.some((a) => /scales/.test(a.if)),
      JSON.stringify(g.act),
    );
    assert.match(g.context, '0.5233 ± 0.012 over 10 seeds (higher is better)');
    const text = renderGuidance(g);
    assert.not.match(text, 'scaler.transform');
    assert.match(text, /^Guidance for this task/);
    assert.match(text, '\nContext. ');
    assert.match(text, '\nInspect.\n- detect_missing_values {"path":"public/train.csv"}: ');
    assert.match(text, '\nAct on evidence.\n- If ');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('procedural guidance: a regularization fault adds the static settings check; a healthy one has no fault rule', async () => {
  const reg = await taskDir('excessive regularization', [{ find: 'SVC(C=0.001,', replace: 'SVC(C=1.0,' }]);
  const healthy = await taskDir('healthy', []);
  try {
    const g = proceduralGuidance(readTaskFacts(reg, 't1'));
    assert.ok(g.inspect.some((c) => c.tool === 'verify_hyperparam_effective'));
    assert.ok(g.act.some((a) => /regularization/.test(a.if)));
    assert.not.match(JSON.stringify(g), 'C=1.0');
    const h = proceduralGuidance(readTaskFacts(healthy, 't1'));
    assert.is(h.act.length, 1);
    assert.match(h.act[0].if, 'healthy');
    assert.not.ok(h.inspect.some((c) => c.tool === 'verify_hyperparam_effective'));
  } finally {
    await rm(reg, { recursive: true, force: true });
    await rm(healthy, { recursive: true, force: true });
  }
});

test("every condition of the suite's index falls in exactly one family of rules", () => {
  const rows = assetText('tasks/py/mltoolbench/instances.tsv')
    .trim()
    .split('\n')
    .slice(1)
    .map((l) => l.split('\t'));
  const conditions = [...new Set(rows.map((r) => r[2]).filter((c) => c && c !== 'healthy' && c !== 'configuration'))];
  assert.ok(conditions.length >= 40, String(conditions.length));
  for (const c of conditions) assert.is(RULES.filter((r) => r.when.test(c)).length, 1, c);
});

test('the checker refuses unknown tools, arguments a tool does not take, and a missing part', () => {
  const base = {
    context: 'Improve the classifier from its starter script.',
    act: [{ if: 'scales differ', then: 'standardize' }],
  };
  assert.equal(
    guidanceProblems({
      ...base,
      inspect: [{ tool: 'detect_missing_values', args: { path: 'public/train.csv' }, why: 'missing values' }],
    }),
    [],
  );
  assert.match(
    guidanceProblems({ ...base, inspect: [{ tool: 'detect_missing_valeus', args: {}, why: 'missing values' }] }).join(
      '\n',
    ),
    'inspect[0].tool: unknown tool "detect_missing_valeus"',
  );
  assert.match(
    guidanceProblems({
      ...base,
      inspect: [{ tool: 'detect_label_imbalance', args: { path: 'public/train.csv' }, why: 'class counts' }],
    }).join('\n'),
    /inspect\[0\]\.args: .*"target": missing/,
  );
  assert.match(
    guidanceProblems({
      context: base.context,
      inspect: [{ tool: 'detect_missing_values', args: {}, why: 'missing values' }],
    }).join('\n'),
    'act',
  );
});

test('a model writes the guidance: a bad answer goes back with its problems, the retry is used, the writer sees the fix', async () => {
  const good = {
    context: 'Improve survival prediction from an SVC starter; check feature scales first.',
    inspect: [{ tool: 'check_feature_normalization', args: { path: 'public/train.csv' }, why: 'column scales' }],
    act: [{ if: 'scales differ by orders of magnitude', then: 'standardize on training data and re-run' }],
  };
  const s = await startReplayServer([
    { content: JSON.stringify({ ...good, inspect: [{ tool: 'scale_checker', args: {}, why: 'column scales' }] }) },
    { content: '```json\n' + JSON.stringify(good) + '\n```' },
  ]);
  const dir = await taskDir('unscaled features', [
    { find: 'Xtr, Xte = Xtr, Xte', replace: 'Xtr, Xte = scaler.transform(Xtr), scaler.transform(Xte)' },
  ]);
  try {
    const client = new LlmClient({
      name: 'writer',
      spec: resolveModel({ provider: 'openai', base_url: s.url, model: 'w' }),
    });
    const r = await askGuidance(client, readTaskFacts(dir, 't1'), { attempts: 3 });
    assert.ok(r.ok);
    if (r.ok) {
      assert.is(r.attempts, 2);
      assert.equal(r.value, good);
    }
    assert.is(s.requests.length, 2);
    const prompt = s.requests[0].messages[0].content;
    assert.match(prompt, 'Configured condition of this instance: unscaled features');
    assert.match(prompt, 'with "Xtr, Xte = scaler.transform(Xtr), scaler.transform(Xte)"');
    assert.match(prompt, '- check_feature_normalization: ');
    assert.match(s.requests[1].messages[2].content, 'inspect[0].tool: unknown tool "scale_checker"');
  } finally {
    await s.close();
    await rm(dir, { recursive: true, force: true });
  }
});

test.run();
