// The mlab scaffold's actions without a jail: the reply format, the workspace fence of the file actions, undo,
// the model-backed edit and tool choice and dropout. Its episodes are in ./episode.test.ts; scripts and tools
// run in test/agents/mlab.test.ts.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { listTools } from '../../../tools/index.js';
import { MLAB_ACTIONS, runAction, type ActionEnv } from './actions.js';
import { unifiedDiff } from './diff.js';
import { parseMlab } from './parse.js';
import { chooseTools, dropTools } from './tools.js';

const NAMES = ['List Files', 'Write File', 'Final Answer', 'detect_missing_values'];
const reply = (action: string, input: string) =>
  `Reflection: r\nResearch Plan and Status: p\nFact Check: f\nThought: t\nAction: ${action}\nAction Input: ${input}`;

test('a reply in format gives its action and JSON input', () => {
  const r = parseMlab(reply('Write File', '{"file_name": "a.py", "content": "print(1)"}'), NAMES);
  assert.equal(r, { ok: true, action: 'Write File', args: { file_name: 'a.py', content: 'print(1)' }, formatOk: true });
});

test('lenient: fenced JSON, raw newlines in strings, trailing commas, any case; missing sections are out of format', () => {
  const r = parseMlab(
    'Thought: go\nAction: write file\nAction Input: ```json\n{"file_name": "a.py", "content": "x = 1\nprint(x)",}\n```',
    NAMES,
  );
  assert.ok(r.ok);
  if (!r.ok) return;
  assert.is(r.action, 'Write File');
  assert.is(r.args.content, 'x = 1\nprint(x)');
  assert.not.ok(r.formatOk);
  const single = parseMlab(reply('List Files', "{'dir_path': 'public'}"), NAMES);
  assert.equal(single.ok && single.args, { dir_path: 'public' });
});

test('unparsable replies say what is wrong', () => {
  const none = parseMlab('I think I should look at the data.', NAMES);
  assert.equal(none, {
    ok: false,
    reason: 'the reply has no "Action:" line; end every reply with Action: <name> and Action Input: <JSON object>',
  });
  const unknown = parseMlab(reply('Run Shell', '{}'), NAMES);
  assert.ok(!unknown.ok && unknown.reason.startsWith('"Run Shell" is not an available action'));
  const bad = parseMlab(reply('Write File', '{"file_name": '), NAMES);
  assert.ok(!bad.ok && /not a JSON object/.test(bad.reason), JSON.stringify(bad));
  // A dropped tool is not on offer.
  assert.not.ok(parseMlab(reply('detect_outliers', '{"path": "public/train.csv"}'), NAMES).ok);
});

let root = '';
let env: ActionEnv;
let asked: Array<{ purpose: string; prompt: string }> = [];

test.before.each(async () => {
  root = await mkdtemp(join(tmpdir(), 'mlepipe-mlab-'));
  await mkdir(join(root, 'ws', 'public'), { recursive: true });
  await mkdir(join(root, 'pub'), { recursive: true });
  await writeFile(join(root, 'pub', 'train.csv'), 'a,b\n1,2\n');
  await writeFile(join(root, 'secret.txt'), 'host secret');
  env = {
    roots: { workspace: join(root, 'ws'), publicDir: join(root, 'pub') },
    session: { workspace: join(root, 'ws') } as ActionEnv['session'],
    timeoutMs: () => 1000,
    observationChars: 2000,
    ask: async (purpose, prompt, file) => {
      asked.push({ purpose, prompt });
      return purpose === 'edit'
        ? '```python\n' + file.content + 'print("edited")\n```'
        : `${purpose}: the log has ${file.content.split('\n').length - 1} lines`;
    },
    backups: new Map(),
    problem: 'Predict b.',
  };
  asked = [];
});

test.after.each(async () => {
  await rm(root, { recursive: true, force: true });
});

const refused = async (name: string, args: Record<string, unknown>, pattern: RegExp) => {
  try {
    await runAction(name, args, env);
  } catch (err) {
    assert.match((err as Error).message, pattern);
    return;
  }
  assert.unreachable(`${name} ${JSON.stringify(args)} was not refused`);
};

test('file actions stay in the workspace: ../, absolute paths and links out are refused', async () => {
  await refused('Read File', { file_name: '../secret.txt' }, /outside the workspace/);
  await refused('Read File', { file_name: join(root, 'secret.txt') }, /absolute paths are refused/);
  await refused('Write File', { file_name: 'sub/../../x.txt', content: 'x' }, /outside the workspace/);
  await refused('Copy File', { source: '/etc/hostname', destination: 'h.txt' }, /absolute/);
  await refused('List Files', { dir_path: '..' }, /outside the workspace/);
  // A link the agent made with a script cannot carry a read or a write out of the workspace.
  await symlink(join(root, 'secret.txt'), join(root, 'ws', 'link.txt'));
  await symlink(root, join(root, 'ws', 'up'));
  await refused('Read File', { file_name: 'link.txt' }, /outside the workspace/);
  await refused('Write File', { file_name: 'link.txt', content: 'x' }, /outside the workspace/);
  await refused('Write File', { file_name: 'up/secret.txt', content: 'x' }, /outside the workspace/);
  await refused('Write File', { file_name: 'up/made/x.txt', content: 'x' }, /outside the workspace/);
  assert.not.ok(existsSync(join(root, 'made')));
  assert.is(await readFile(join(root, 'secret.txt'), 'utf8'), 'host secret');
});

test('public/ is readable and listed, never writable', async () => {
  assert.is((await runAction('Read File', { file_name: 'public/train.csv' }, env)).observation, 'a,b\n1,2\n');
  assert.is((await runAction('List Files', { dir_path: 'public' }, env)).observation, 'train.csv');
  await refused('Write File', { file_name: 'public/train.csv', content: 'x' }, /public\/ is read-only/);
  await refused('Append File', { file_name: 'public/new.csv', content: 'x' }, /public\/ is read-only/);
  await refused('Copy File', { source: 'public/train.csv', destination: 'public/copy.csv' }, /read-only/);
  await runAction('Copy File', { source: 'public/train.csv', destination: 'data/train.csv' }, env);
  assert.is(await readFile(join(root, 'ws', 'data', 'train.csv'), 'utf8'), 'a,b\n1,2\n');
  assert.is((await runAction('List Files', { dir_path: '.' }, env)).observation, 'data/\npublic/');
});

test('Undo Edit Script restores each earlier text in turn, and removes a file it had made', async () => {
  await runAction('Write File', { file_name: 'train.py', content: 'v1\n' }, env);
  await runAction('Append File', { file_name: 'train.py', content: 'v2\n' }, env);
  await runAction(
    'Edit Script (AI)',
    { script_name: 'train.py', edit_instruction: 'add a print', save_name: 'train.py' },
    env,
  );
  assert.is(await readFile(join(root, 'ws', 'train.py'), 'utf8'), 'v1\nv2\nprint("edited")\n');
  await runAction('Undo Edit Script', { script_name: 'train.py' }, env);
  assert.is(await readFile(join(root, 'ws', 'train.py'), 'utf8'), 'v1\nv2\n');
  await runAction('Undo Edit Script', { script_name: 'train.py' }, env);
  assert.is(await readFile(join(root, 'ws', 'train.py'), 'utf8'), 'v1\n');
  await runAction('Undo Edit Script', { script_name: 'train.py' }, env);
  assert.not.ok(existsSync(join(root, 'ws', 'train.py')));
  await refused('Undo Edit Script', { script_name: 'train.py' }, /nothing to undo/);
});

test('Inspect Script Lines numbers lines and caps the window at 100', async () => {
  await runAction(
    'Write File',
    { file_name: 's.py', content: Array.from({ length: 150 }, (_, i) => `x${i + 1}`).join('\n') },
    env,
  );
  const o = (
    await runAction('Inspect Script Lines', { script_name: 's.py', start_line_number: 3, end_line_number: 4 }, env)
  ).observation;
  assert.is(o, 'Here are the lines (the file ends at line 150):\n\nx3\nx4');
  await refused(
    'Inspect Script Lines',
    { script_name: 's.py', start_line_number: 1, end_line_number: 150 },
    /at most 100 lines/,
  );
});

test('tools: a domain keeps only its tools; dropout removes the seeded fraction, the same for the same seed', () => {
  const tab = chooseTools('tabular');
  assert.ok(tab.length > 5);
  assert.ok(tab.every((t) => t.domain === 'tabular'));
  assert.is(tab.length, listTools('tabular').length);
  assert.equal(chooseTools('none'), []);
  assert.equal(
    chooseTools(['acf', 'detect_outliers']).map((t) => t.name),
    ['acf', 'detect_outliers'],
  );
  const all = chooseTools('all');
  const kept = dropTools(all, 0.2, 0, 'task', 'p', 0);
  assert.is(kept.length, all.length - Math.round(0.2 * all.length));
  assert.equal(dropTools(all, 0.2, 0, 'task', 'p', 0), kept);
  // Another repeat draws another set.
  assert.not.equal(
    dropTools(all, 0.2, 0, 'task', 'p', 1).map((t) => t.name),
    kept.map((t) => t.name),
  );
  assert.is(dropTools(all, 0, 0).length, all.length);
});

test("MLAgentBench's 17 actions by its names and arguments; edits answer with a unified diff", async () => {
  assert.equal(
    MLAB_ACTIONS.map((a) => a.name),
    [
      'List Files',
      'Read File',
      'Write File',
      'Append File',
      'Copy File',
      'Inspect Script Lines',
      'Execute Script',
      'Python REPL',
      'Request Help',
      'Undo Edit Script',
      'Edit Script (AI)',
      'Edit Script Segment (AI)',
      'Understand File',
      'Append Summary to Research Log',
      'Reflection',
      'Retrieval from Research Log',
      'Final Answer',
    ],
  );
  const input = (n: string) => Object.keys(MLAB_ACTIONS.find((a) => a.name === n)!.input);
  assert.equal(input('Edit Script Segment (AI)'), [
    'script_name',
    'start_line_number',
    'end_line_number',
    'edit_instruction',
    'save_name',
  ]);
  assert.equal(
    [
      input('Python REPL'),
      input('Request Help'),
      input('Reflection'),
      input('Retrieval from Research Log'),
      input('Append Summary to Research Log'),
    ],
    [['command'], ['request'], ['things_to_reflect_on'], ['current_plan'], ['content']],
  );
  await runAction('Write File', { file_name: 's.py', content: 'a = 1\nb = 2\nc = 3\nd = 4\n' }, env);
  const whole = (
    await runAction('Edit Script (AI)', { script_name: 's.py', edit_instruction: 'print', save_name: 's2.py' }, env)
  ).observation;
  assert.is(
    whole,
    'The edited file is saved to s2.py. Here is the diff, please check if the edit is correct and desirable:\n\n--- s2.py\n+++ s2.py\n@@ -2,3 +2,4 @@\n b = 2\n c = 3\n d = 4\n+print("edited")\n',
  );
  // The segment edit sends only lines 2-3 and puts the answer back between the lines around them.
  const seg = (
    await runAction(
      'Edit Script Segment (AI)',
      { script_name: 's.py', start_line_number: 2, end_line_number: 3, edit_instruction: 'print', save_name: 's.py' },
      env,
    )
  ).observation;
  assert.is(await readFile(join(root, 'ws', 's.py'), 'utf8'), 'a = 1\nb = 2\nc = 3\nprint("edited")\nd = 4\n');
  assert.match(asked[1].prompt, /```python\nb = 2\nc = 3\n```/);
  assert.match(
    seg,
    /^The edited file is saved to s\.py\. Here is the diff.*\n\n--- s\.py\n\+\+\+ s\.py\n@@ -1,4 \+1,5 @@\n a = 1\n b = 2\n c = 3\n\+print\("edited"\)\n d = 4\n$/s,
  );
  await runAction('Undo Edit Script', { script_name: 's.py' }, env);
  assert.is(await readFile(join(root, 'ws', 's.py'), 'utf8'), 'a = 1\nb = 2\nc = 3\nd = 4\n');
  await refused(
    'Edit Script Segment (AI)',
    { script_name: 's.py', start_line_number: 3, end_line_number: 2, edit_instruction: 'x', save_name: 's.py' },
    /start <= end/,
  );
});

test('the research log: appended summaries are what Reflection and Retrieval send to the model; Request Help says no one is there', async () => {
  assert.is(
    (await runAction('Append Summary to Research Log', { content: 'step 1: the starter scores 0.7' }, env)).observation,
    'Successfully appended to research log',
  );
  await runAction('Append Summary to Research Log', { content: 'step 2: scaled the inputs' }, env);
  assert.is(
    await readFile(join(root, 'ws', 'research_log.log'), 'utf8'),
    'step 1: the starter scores 0.7\nstep 2: scaled the inputs\n',
  );
  assert.is(
    (await runAction('Reflection', { things_to_reflect_on: 'what worked' }, env)).observation,
    'Reflection: reflect: the log has 2 lines',
  );
  assert.is(
    (await runAction('Retrieval from Research Log', { current_plan: 'tune C' }, env)).observation,
    'retrieve: the log has 2 lines',
  );
  assert.equal(
    asked.map((a) => a.purpose),
    ['reflect', 'retrieve'],
  );
  for (const a of asked)
    assert.ok(a.prompt.includes('Predict b.') && a.prompt.includes('step 2: scaled the inputs'), a.prompt);
  assert.match(asked[0].prompt, /Reflect on this: what worked/);
  assert.match(asked[1].prompt, /tune C/);
  assert.match(
    (await runAction('Request Help', { request: 'install xgboost' }, env)).observation,
    /^No human is attached to this run/,
  );
});

test('unifiedDiff: hunks with three lines of context, as difflib writes them', () => {
  const a = Array.from({ length: 20 }, (_, i) => `l${i + 1}`).join('\n') + '\n';
  const b = a.replace('l2\n', 'L2\n').replace('l18\n', '');
  assert.is(
    unifiedDiff(a, b, 'x', 'y'),
    '--- x\n+++ y\n@@ -1,5 +1,5 @@\n l1\n-l2\n+L2\n l3\n l4\n l5\n@@ -15,6 +15,5 @@\n l15\n l16\n l17\n-l18\n l19\n l20\n',
  );
  assert.is(unifiedDiff('', 'x\n'), '--- before\n+++ after\n@@ -0,0 +1 @@\n+x\n');
  assert.is(unifiedDiff(a, a), '');
});

test.run();
