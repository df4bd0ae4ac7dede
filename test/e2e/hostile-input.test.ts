// Input built to crash a parser, through the built CLI: each must end as a
// positioned user error (FILE:LINE:COL, exit 2), never an internal error or a
// stack trace; and output into a closed pipe must end quietly.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execa } from 'execa';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { cli, CLI, tmpProject } from '../helpers.js';

const OK = 'stages:\n  a: { uses: shell, with: { run: echo a } }\n';
const BOMB = [
  'a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]',
  ...'bcdefghi'.split('').map((k, i) => `${k}: &${k} [${Array(9).fill(`*${'abcdefghi'[i]}`).join(', ')}]`),
].join('\n');

/** Each command refuses the project with exactly these stderr lines (a RegExp for a line matches it). */
async function refused(
  dir: string,
  args: string[],
  expect: Array<string | RegExp>,
  commands = ['validate'],
): Promise<void> {
  for (const command of commands) {
    const r = await cli([command, 'e.yaml', ...args], { cwd: dir });
    assert.is(r.exitCode, 2, `${command}: ${r.stderr}`);
    assert.not.match(r.stderr, 'internal error');
    assert.not.match(r.stderr, /\n\s+at /, 'no stack trace');
    const lines = r.stderr.trim().split('\n');
    assert.is(lines.length, expect.length, r.stderr);
    expect.forEach((e, i) => (typeof e === 'string' ? assert.is(lines[i], e) : assert.match(lines[i], e)));
  }
}

test('a reward formula nested 3,000 parentheses deep', async () => {
  const deep = '('.repeat(3000) + 'gold' + ')'.repeat(3000);
  const dir = await tmpProject({ 'e.yaml': `name: e\nrewards:\n  deep: "${deep}"\n${OK}` });
  await refused(dir, [], ['e.yaml:3:110: rewards.deep: nested more than 100 levels deep'], ['validate', 'plan']);
});

test('a value that contains itself through a YAML alias', async () => {
  const dir = await tmpProject({ 'e.yaml': `name: e\nx: &a [*a]\n${OK}` });
  await refused(dir, [], ['e.yaml:2:8: alias *a refers to a value that contains it'], ['validate', 'plan', 'run']);
});

test('a YAML alias bomb (billion laughs)', async () => {
  const dir = await tmpProject({ 'e.yaml': `name: e\n${BOMB}\n${OK}` });
  await refused(dir, [], [/^e\.yaml:\d+:\d+: more than 100000 values once aliases are expanded/]);
});

test('YAML nested thousands of levels deep', async () => {
  const dir = await tmpProject({ 'e.yaml': `name: e\nvars: { x: ${'['.repeat(5000)}${']'.repeat(5000)} }\n${OK}` });
  await refused(dir, [], [/^e\.yaml:2:\d+: nested more than 100 levels deep$/]);
});

test('an alias with no anchor', async () => {
  const dir = await tmpProject({ 'e.yaml': `name: e\nvars: { x: *nope }\n${OK}` });
  await refused(dir, [], ['e.yaml:2:12: alias *nope has no anchor &nope before it']);
});

test('bytes that are not UTF-8, in an experiment, a base it extends and the settings file', async () => {
  const latin1 = (s: string) => Buffer.from(s, 'latin1');
  const dir = await tmpProject({});
  await writeFile(join(dir, 'e.yaml'), latin1(`name: e\ndescription: "café"\n${OK}`));
  await refused(dir, [], ['e.yaml:2:18: not valid UTF-8 (byte 0xE9 at offset 25); save the file as UTF-8']);
  await writeFile(join(dir, 'base.yaml'), latin1(`description: "naïve"\n${OK}`));
  await writeFile(join(dir, 'e.yaml'), 'extends: ./base.yaml\nname: e\n');
  await refused(dir, [], ['base.yaml:1:17: not valid UTF-8 (byte 0xEF at offset 16); save the file as UTF-8']);
  await writeFile(join(dir, 'e.yaml'), `name: e\n${OK}`);
  await writeFile(join(dir, 'mlepipe.config.yaml'), latin1('cache: ".mlepipe-é"\n'));
  await refused(
    dir,
    [],
    [/mlepipe\.config\.yaml:1:18: not valid UTF-8 \(byte 0xE9 at offset 17\); save the file as UTF-8$/],
  );
  await writeFile(join(dir, 'mlepipe.config.yaml'), `cache: .mlepipe\n${BOMB}\n`);
  await refused(dir, [], [/mlepipe\.config\.yaml:\d+:\d+: more than 100000 values once aliases are expanded/]);
});

test('a -S value with a self-referential alias is positioned inside the argument', async () => {
  const dir = await tmpProject({ 'e.yaml': `name: e\nvars: { x: 1 }\n${OK}` });
  await refused(
    dir,
    ['-S', 'vars.x=&a [*a]'],
    [
      '-S vars.x=&a [*a] (column 15): vars.x: cannot read the value "&a [*a]": alias *a refers to a value that contains it',
    ],
  );
});

test('a task.json that is not JSON', async () => {
  const dir = await tmpProject({ 't/task.json': '{\n  "id": "t",\n  "metric": accuracy\n}\n' });
  const r = await cli(['task', 'show', 't'], { cwd: dir });
  assert.is(r.exitCode, 2, r.stderr);
  assert.is(r.stderr.trim(), 't/task.json:3:13: not valid JSON: unexpected "a"');
});

test('validate names a missing file once', async () => {
  const dir = await tmpProject({});
  const r = await cli(['validate', 'missing.yaml'], { cwd: dir });
  assert.is(r.exitCode, 2);
  assert.is(r.stderr.trim(), 'missing.yaml: no such file');
});

test('plan into a pipe closed early (| head -1): no EPIPE trace, the usual exit code', async () => {
  // More output than a pipe buffers, so that the writer is still writing when head exits.
  const stages = Array.from(
    { length: 1500 },
    (_, i) =>
      `  stage_with_a_rather_long_name_${String(i).padStart(4, '0')}: { uses: shell, with: { run: echo ${i} } }`,
  );
  const dir = await tmpProject({ 'e.yaml': `name: many\nstages:\n${stages.join('\n')}\n` });
  for (const json of [[], ['--json']]) {
    const script = `set -o pipefail; "${process.execPath}" "${CLI}" plan e.yaml ${json.join(' ')} 2>err.txt | head -1; echo "exit $?" >>err.txt`;
    const r = await execa('bash', ['-c', script], { cwd: dir, reject: false, env: { CI: 'true', NO_COLOR: '1' } });
    assert.is(r.stdout.split('\n').length, 1, r.stdout.slice(0, 200));
    const err = await readFile(join(dir, 'err.txt'), 'utf8');
    assert.is(err, 'exit 0\n', err);
  }
});

test.run();
