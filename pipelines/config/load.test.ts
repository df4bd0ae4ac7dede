import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { UserError } from '../../core/errors.js';
import { loadExperiment } from './load.js';
import { parseYaml } from './yaml.js';
import { interpolate } from './interpolate.js';

async function project(files: Record<string, string>): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'mlepipe-load-'));
  await writeFile(join(dir, 'mlepipe.config.yaml'), 'concurrency: 2\n');
  for (const [name, text] of Object.entries(files)) await writeFile(join(dir, name), text);
  return dir;
}

async function diagnostics(file: string, overrides: string[] = [], env: NodeJS.ProcessEnv = {}): Promise<string[]> {
  try {
    await loadExperiment(file, { overrides, env });
  } catch (err) {
    assert.instance(err, UserError);
    return (err as UserError).diagnostics.map((d) => `${d.pos?.line}:${d.pos?.col} ${d.path}: ${d.message}`);
  }
  return [];
}

test('positions of keys and values', () => {
  const { origins } = parseYaml('a:\n  b: 1\n  c: [x, y]\n', 'f.yaml');
  assert.equal(origins.get(['a', 'b'].join('\u0000'))?.value, { file: 'f.yaml', line: 2, col: 6 });
  assert.equal(origins.get(['a', 'b'].join('\u0000'))?.key, { file: 'f.yaml', line: 2, col: 3 });
  assert.equal(origins.get(['a', 'c', '1'].join('\u0000'))?.value, { file: 'f.yaml', line: 3, col: 10 });
});

test('extends: deep merge, lists replaced, positions from the file that set them', async () => {
  const dir = await project({
    'base.yaml':
      'name: base\nvars: { n: 1, list: [1, 2, 3] }\nstages:\n  a: { uses: shell, with: { run: echo base, deps: [x, y] } }\n',
    'child.yaml':
      'extends: ./base.yaml\nname: child\nvars: { list: [9] }\nstages:\n  a: { with: { run: echo child } }\n',
    // Dependencies must exist by validation.
    x: '',
    y: '',
  });
  const exp = await loadExperiment(join(dir, 'child.yaml'), { env: {} });
  assert.is(exp.name, 'child');
  assert.equal(exp.vars, { n: 1, list: [9] });
  assert.is(exp.stages[0].params.run, 'echo child');
  assert.equal(exp.stages[0].params.deps, ['x', 'y']);
  const errs = await diagnostics(join(dir, 'child.yaml'), ['stages.a.with.deps=3']);
  assert.equal(errs, [
    '1:23 stages.a.with.deps: must be array (a list: write [3] for one item, or one "- item" line per item)',
  ]);
});

test('interpolation keeps types for whole references and reports unknown names at the reference', () => {
  const src = parseYaml(
    'vars: { seed: 7, who: "${env.WHO:-world}" }\nx: ${vars.seed}\ny: "hi ${vars.who} $${not}"\nz: "a ${vars.nope}"\n',
    'f.yaml',
  );
  try {
    interpolate(src, {});
    assert.unreachable('should fail');
  } catch (err) {
    const d = (err as UserError).diagnostics;
    assert.is(d.length, 1);
    assert.equal([d[0].pos?.line, d[0].pos?.col], [4, 7]);
    assert.match(d[0].message, 'undefined variable vars.nope');
  }
  const ok = interpolate(
    parseYaml('vars: { seed: 7, who: "${env.WHO:-world}" }\nx: ${vars.seed}\ny: "hi ${vars.who} $${not}"\n', 'f.yaml'),
    {},
  );
  assert.equal(ok.value, { vars: { seed: 7, who: 'world' }, x: 7, y: 'hi world ${not}' });
});

test('overrides parse values as YAML and apply before interpolation', async () => {
  const dir = await project({
    'e.yaml':
      'name: e\nvars: { n: 1 }\nstages:\n  a: { uses: shell, with: { run: "echo ${vars.n}", params: { k: 1 } } }\n',
  });
  const exp = await loadExperiment(join(dir, 'e.yaml'), {
    overrides: ['vars.n=5', 'stages.a.with.params.k=[1, 2]'],
    env: {},
  });
  assert.is(exp.stages[0].params.run, 'echo 5');
  assert.equal((exp.stages[0].params.params as Record<string, unknown>).k, [1, 2]);
});

test('schema defaults are filled into params', async () => {
  const dir = await project({ 'e.yaml': 'name: e\nstages:\n  a: { uses: shell, with: { run: x } }\n' });
  const exp = await loadExperiment(join(dir, 'e.yaml'), { env: {} });
  assert.equal(exp.stages[0].params, { run: 'x', deps: [], outs: [], env: {}, params: {} });
});

test('settings: cache dir relative to the settings file; MLEPIPE_CACHE wins', async () => {
  const dir = await project({ 'e.yaml': 'name: e\nstages:\n  a: { uses: shell, with: { run: x } }\n' });
  await writeFile(join(dir, 'mlepipe.config.yaml'), 'cache: store\nconcurrency: 3\n');
  let exp = await loadExperiment(join(dir, 'e.yaml'), { env: {} });
  assert.is(exp.settings.cacheDir, join(dir, 'store'));
  assert.is(exp.settings.concurrency, 3);
  exp = await loadExperiment(join(dir, 'e.yaml'), { env: { MLEPIPE_CACHE: '/tmp/elsewhere' } });
  assert.is(exp.settings.cacheDir, '/tmp/elsewhere');
  await writeFile(join(dir, 'mlepipe.config.yaml'), 'concurency: 3\n');
  const errs = await diagnostics(join(dir, 'e.yaml'));
  assert.equal(errs, ['1:1 concurency: unknown key (did you mean "concurrency"?)']);
});

test('settings: a hostile or mis-encoded mlepipe.config.yaml is a positioned user error', async () => {
  const dir = await project({ 'e.yaml': 'name: e\nstages:\n  a: { uses: shell, with: { run: x } }\n' });
  const settings = join(dir, 'mlepipe.config.yaml');
  await writeFile(settings, 'concurrency: 2\nhosts: &h { a: *h }\n');
  assert.equal(await diagnostics(join(dir, 'e.yaml')), ['2:16 undefined: alias *h refers to a value that contains it']);
  await writeFile(
    settings,
    Buffer.concat([Buffer.from('concurrency: 2\ncache: "caf'), Buffer.from([0xe9]), Buffer.from('"\n')]),
  );
  assert.equal(await diagnostics(join(dir, 'e.yaml')), [
    '2:12 undefined: not valid UTF-8 (byte 0xE9 at offset 26); save the file as UTF-8',
  ]);
});

test('-S values: hostile YAML is refused with a position inside the argument', async () => {
  const dir = await project({ 'e.yaml': 'name: e\nvars: { n: 1 }\nstages:\n  a: { uses: shell, with: { run: x } }\n' });
  const at = async (value: string) => {
    try {
      await loadExperiment(join(dir, 'e.yaml'), { overrides: [`vars.n=${value}`], env: {} });
    } catch (err) {
      return (err as UserError).message;
    }
    return 'accepted';
  };
  assert.is(
    await at('&a [*a]'),
    '-S vars.n=&a [*a] (column 15): vars.n: cannot read the value "&a [*a]": alias *a refers to a value that contains it',
  );
  assert.match(
    await at('['.repeat(3000) + ']'.repeat(3000)),
    /^-S vars\.n=\[+\]+ \(column \d+\): vars\.n: cannot read the value "\[+\]+": nested more than 100 levels deep$/,
  );
  assert.is(
    await at('[1, 2'),
    '-S vars.n=[1, 2 (column 16): vars.n: cannot read the value "[1, 2": Flow sequence must end with a ]',
  );
  const exp = await loadExperiment(join(dir, 'e.yaml'), {
    overrides: ['vars.n=null', 'vars.m=', 'vars.k=[1, {a: b}]'],
    env: {},
  });
  assert.equal(exp.vars, { n: null, m: '', k: [1, { a: 'b' }] });
});

test.run();
