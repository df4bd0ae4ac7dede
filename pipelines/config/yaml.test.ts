import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { UserError } from '../../core/errors.js';
import { parseYaml, readYamlFile } from './yaml.js';

/** The diagnostics of a YAML text that must be refused, as `LINE:COL message`. */
function refused(text: string): string[] {
  try {
    parseYaml(text, 'f.yaml');
  } catch (err) {
    assert.instance(err, UserError);
    return (err as UserError).diagnostics.map((d) => `${d.pos?.file}:${d.pos?.line}:${d.pos?.col} ${d.message}`);
  }
  throw new Error('accepted');
}

const BOMB = [
  'a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]',
  ...'bcdefghi'.split('').map((k, i) => `${k}: &${k} [${Array(9).fill(`*${'abcdefghi'[i]}`).join(', ')}]`),
].join('\n');

test('a value that contains itself through an alias is refused at the alias', () => {
  assert.equal(refused('name: e\nx: &a [*a]\n'), ['f.yaml:2:8 alias *a refers to a value that contains it']);
  assert.equal(refused('x: &m { k: { back: *m } }\n'), ['f.yaml:1:20 alias *m refers to a value that contains it']);
});

test('an alias bomb is refused before it expands', () => {
  const d = refused(BOMB);
  assert.is(d.length, 1);
  assert.match(
    d[0],
    /^f\.yaml:\d+:\d+ more than 100000 values once aliases are expanded \(each alias counts as a copy of its value\)$/,
  );
});

test('an alias with no anchor before it is refused at the alias', () => {
  assert.equal(refused('a: *nope\n'), ['f.yaml:1:4 alias *nope has no anchor &nope before it']);
});

test('deep nesting is refused with a position', () => {
  assert.match(
    refused('x: ' + '['.repeat(150) + ']'.repeat(150))[0],
    /^f\.yaml:1:\d+ nested more than 100 levels deep/,
  );
  assert.match(
    refused('x: ' + '['.repeat(5000) + ']'.repeat(5000))[0],
    /^f\.yaml:1:\d+ nested more than 100 levels deep/,
  );
  assert.match(
    refused('x: ' + '{a: '.repeat(5000) + '1' + '}'.repeat(5000))[0],
    /^f\.yaml:1:\d+ nested more than 100 levels deep/,
  );
});

test('ordinary aliases still load, with origins at the anchored value', () => {
  const { value, origins } = parseYaml('base: &b { run: echo, n: 1 }\nuse: *b\nlist: [*b, *b]\n', 'f.yaml');
  assert.equal(value, {
    base: { run: 'echo', n: 1 },
    use: { run: 'echo', n: 1 },
    list: [
      { run: 'echo', n: 1 },
      { run: 'echo', n: 1 },
    ],
  });
  assert.equal(origins.get(['use', 'n'].join('\u0000'))?.value, { file: 'f.yaml', line: 1, col: 26 });
  assert.equal(parseYaml('x: ' + '['.repeat(99) + ']'.repeat(99), 'f.yaml').origins.size, 100);
});

test('a file that is not UTF-8 is refused at the first bad byte', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'mlepipe-yaml-'));
  const file = join(dir, 'latin1.yaml');
  await writeFile(file, Buffer.concat([Buffer.from('name: e\nx: "caf'), Buffer.from([0xe9]), Buffer.from('"\n')]));
  try {
    await readYamlFile(file);
    assert.unreachable('accepted');
  } catch (err) {
    assert.instance(err, UserError);
    assert.is(
      (err as UserError).message,
      `${file}:2:8: not valid UTF-8 (byte 0xE9 at offset 15); save the file as UTF-8`,
    );
  }
  // A UTF-8 byte-order mark and U+FFFD written as UTF-8 are fine.
  await writeFile(file, '\uFEFFname: "\uFFFD ok"\n');
  assert.equal((await readYamlFile(file)).value, { name: '\uFFFD ok' });
});

test.run();
