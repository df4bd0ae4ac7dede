import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtemp, readFile, readdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { UserError } from './errors.js';
import { formatJson, isObject, parseJsonText, readJson, readJsonl, writeJson, writeJsonl } from './json-files.js';

async function refusal(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (err) {
    assert.instance(err, UserError);
    return (err as UserError).message;
  }
  throw new Error('expected a refusal');
}

test('JSON Lines round-trip, blank lines skipped, and no temporary file left behind', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'mlepipe-json-'));
  const file = join(dir, 'sub', 'a.jsonl');
  await writeJsonl(file, [{ a: 1 }, { b: [2] }]);
  assert.is(await readFile(file, 'utf8'), '{"a":1}\n{"b":[2]}\n');
  assert.equal(await readdir(join(dir, 'sub')), ['a.jsonl']);
  await writeFile(file, '{"a":1}\n\n{"b":2}\n');
  assert.equal(await readJsonl(file), [{ a: 1 }, { b: 2 }]);
});

test('a damaged line or a wrong shape is named with its file and line', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'mlepipe-json-'));
  const file = join(dir, 'a.jsonl');
  await writeFile(file, '{"a":1}\n{"a":\n');
  assert.match(await refusal(readJsonl(file)), `${file}:2: not valid JSON`);
  await writeFile(file, '{"a":1}\n[3]\n');
  assert.is(await refusal(readJsonl(file, isObject)), `${file}:2: expected a JSON object`);
  const one = join(dir, 'a.json');
  await writeFile(one, '{"a": }');
  assert.match(await refusal(readJson(one)), `${one}:1:7: not valid JSON`);
  await writeFile(one, 'null');
  assert.is(await refusal(readJson(one, isObject)), `${one}: expected a JSON object`);
});

test('numbers that are not finite are written as Python writes them and read back; strings stay strings', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'mlepipe-json-'));
  const value = { score: Infinity, low: -Infinity, nan: NaN, said: 'NaN or -Infinity', list: [1, NaN] };
  assert.is(formatJson(value), '{"score":Infinity,"low":-Infinity,"nan":NaN,"said":"NaN or -Infinity","list":[1,NaN]}');
  await writeJsonl(join(dir, 'a.jsonl'), [value, { plain: 1 }]);
  assert.equal(await readJsonl(join(dir, 'a.jsonl')), [value, { plain: 1 }]);
  await writeJson(join(dir, 'a.json'), value, 2);
  assert.equal(await readJson(join(dir, 'a.json')), value);
  assert.match(await readFile(join(dir, 'a.json'), 'utf8'), '\n  "score": Infinity,\n');
  // Python's json.loads takes exactly these tokens: other spellings stay refused, with where.
  assert.throws(() => parseJsonText('{"score": inf}'));
  assert.throws(() => parseJsonText('{"score": -NaN}'));
  await writeFile(join(dir, 'b.json'), '{"score": nan}');
  assert.match(await refusal(readJson(join(dir, 'b.json'))), `${join(dir, 'b.json')}:1:11: not valid JSON`);
});

test.run();
