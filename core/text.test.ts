import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { UserError } from './errors.js';
import { decodeUtf8, jsonErrorOffset, parseJson, readJsonFile, readTextFile } from './text.js';

const refusal = (fn: () => unknown): string => {
  try {
    fn();
  } catch (err) {
    assert.instance(err, UserError);
    return (err as UserError).message;
  }
  throw new Error('accepted');
};

test('decodeUtf8: UTF-8 (with or without a BOM) decodes; the first bad byte is positioned', () => {
  assert.is(decodeUtf8(Buffer.from('\uFEFFa: é\n'), 'f'), 'a: é\n');
  assert.is(decodeUtf8(Buffer.from('a: \uFFFD\n'), 'f'), 'a: \uFFFD\n');
  const bytes = Buffer.concat([Buffer.from('a: \uFFFD é\nb: '), Buffer.from([0xff, 0xfe]), Buffer.from('\n')]);
  assert.is(
    refusal(() => decodeUtf8(bytes, 'f.yaml')),
    'f.yaml:2:4: not valid UTF-8 (byte 0xFF at offset 13); save the file as UTF-8',
  );
  // A UTF-16 file (its BOM is FF FE) is refused at its first byte.
  assert.match(
    refusal(() => decodeUtf8(Buffer.from('\uFEFFa: 1\n', 'utf16le'), 'w.yaml')),
    /^w\.yaml:1:1: not valid UTF-8 \(byte 0xFF at offset 0\)/,
  );
  // A sequence cut short at the end of the file.
  assert.match(
    refusal(() => decodeUtf8(Buffer.from([0x61, 0x0a, 0xc3]), 'f')),
    /^f:2:1: not valid UTF-8 \(byte 0xC3 at offset 2\)/,
  );
});

test('parseJson: positioned errors at the character where the text stops being JSON', () => {
  assert.equal(parseJson('{"a": [1, 2]}', 'f.json'), { a: [1, 2] });
  assert.is(
    refusal(() => parseJson('{"a":}', 'f.json')),
    'f.json:1:6: not valid JSON: unexpected "}"',
  );
  assert.is(
    refusal(() => parseJson('{\n  "a": 1,\n  "b": x\n}', 'f.json')),
    'f.json:3:8: not valid JSON: unexpected "x"',
  );
  assert.is(
    refusal(() => parseJson('{"a": 1', 'f.json')),
    'f.json:1:8: not valid JSON: unexpected end of file',
  );
  assert.is(
    refusal(() => parseJson('', 'f.json')),
    'f.json:1:1: not valid JSON: unexpected end of file',
  );
  assert.match(
    refusal(() => parseJson('{"a": "x\ny"}', 'f.json')),
    'f.json:1:7: not valid JSON: a string that is not closed',
  );
  for (const [text, at] of [
    ['[1, 2,]', 6],
    ['{"a": 1} x', 9],
    ['[01]', 2],
    ['{a: 1}', 1],
    ['[tru]', 1],
    ['{"a" 1}', 5],
    ['[[[[]]]', 7],
    ['['.repeat(100_000), 100_000],
  ] as const) {
    assert.is(jsonErrorOffset(text), at, text.slice(0, 20));
  }
});

test('readTextFile / readJsonFile: missing files and bad bytes are user errors naming the file', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'mlepipe-text-'));
  const missing = join(dir, 'nope.json');
  await readTextFile(missing).then(
    () => assert.unreachable(),
    (err) => assert.is((err as Error).message, `${missing}: no such file`),
  );
  const bad = join(dir, 'bad.json');
  await writeFile(bad, Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xe9, 0x22, 0x7d]));
  await readJsonFile(bad).then(
    () => assert.unreachable(),
    (err) => assert.match((err as Error).message, `${bad}:1:7: not valid UTF-8`),
  );
});

test.run();
