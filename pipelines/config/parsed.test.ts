import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdir, mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { UserError } from '../../core/errors.js';
import { readYamlFileCached } from './parsed.js';
import { readYamlFile } from './yaml.js';

const TEXT =
  'name: e\nvars: { n: 3 }\nstages:\n  a: { uses: shell, with: { run: "echo ${vars.n}" } }\n  b:\n    uses: shell\n    needs: [a]\n';

async function setup(text = TEXT): Promise<{ dir: string; file: string; cache: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'mlepipe-parsed-'));
  const cache = join(dir, '.mlepipe');
  await mkdir(cache);
  const file = join(dir, 'e.yaml');
  await writeFile(file, text);
  return { dir, file, cache };
}

const stored = async (cache: string) => readdir(join(cache, 'parsed')).catch(() => [] as string[]);

test('a stored parse gives back the same values and positions as parsing', async () => {
  const { file, cache } = await setup();
  const fresh = await readYamlFile(file);
  const first = await readYamlFileCached(file, cache);
  assert.equal((await stored(cache)).length, 1);
  const again = await readYamlFileCached(file, cache);
  assert.equal(again.value, fresh.value);
  assert.equal([...again.origins], [...fresh.origins]);
  assert.equal(first.value, fresh.value);
});

test('the store is read, and a changed file is parsed again', async () => {
  const { file, cache } = await setup();
  await readYamlFileCached(file, cache);
  const [entry] = await stored(cache);
  // What the store holds is what comes back while the text is unchanged.
  const path = join(cache, 'parsed', entry);
  const e = JSON.parse(await readFile(path, 'utf8'));
  e.value.name = 'from-store';
  await writeFile(path, JSON.stringify(e));
  assert.is(((await readYamlFileCached(file, cache)).value as { name: string }).name, 'from-store');
  // One more byte in the file: parsed again, and the entry replaced (still one per file).
  await writeFile(file, TEXT.replace('name: e', 'name: e2'));
  assert.is(((await readYamlFileCached(file, cache)).value as { name: string }).name, 'e2');
  assert.equal(await stored(cache), [entry]);
});

test('errors are found again each time; values JSON cannot hold are not stored', async () => {
  const { file, cache } = await setup('name: e\nstages: [\n');
  for (let i = 0; i < 2; i++) {
    const err = await readYamlFileCached(file, cache).catch((e: unknown) => e);
    assert.instance(err, UserError);
  }
  assert.equal(await stored(cache), []);
  await writeFile(file, 'name: e\nx: .inf\ny: -0\n');
  for (let i = 0; i < 2; i++) {
    const v = (await readYamlFileCached(file, cache)).value as { x: number; y: number };
    assert.is(v.x, Infinity);
    assert.ok(Object.is(v.y, -0));
  }
  assert.equal(await stored(cache), []);
});

test('no store is made where the cache does not exist yet', async () => {
  const { dir, file } = await setup();
  const missing = join(dir, 'no-cache');
  assert.equal((await readYamlFileCached(file, missing)).value, (await readYamlFile(file)).value);
  assert.equal((await readdir(dir)).sort(), ['.mlepipe', 'e.yaml']);
});

test.run();
