// `mlepipe report`'s output formats through the built CLI: one format at a time, a CSV file per table
// (several tables never share one stream), and one table picked by name.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { cli, tmpProject } from '../helpers.js';

// Two tables over the nodes of an ablated stage: one of scores, one of sizes.
const EXP = `name: formats
stages:
  fit:
    uses: shell
    with:
      run: |
        k=$(echo "$MLEPIPE_PARAMS" | sed 's/.*"k":\\([0-9]*\\).*/\\1/')
        printf '{"score": %d, "size": %d}' $(( k * 10 )) $(( k + 100 )) > $MLEPIPE_OUT/metrics.json
      params: { k: 1 }
  ks: { uses: ablate, target: fit, matrix: { params.k: [1, 2] } }
tables:
  scores: { from: fit, columns: [score] }
  sizes: { from: fit, columns: [size], description: 'size, in "units"' }
`;

const project = async () => {
  const dir = await tmpProject({ 'e.yaml': EXP });
  const run = await cli(['run', 'e.yaml'], { cwd: dir });
  assert.is(run.exitCode, 0, run.stderr);
  return dir;
};

test('two output formats at once are refused, naming both flags', async () => {
  const dir = await tmpProject({ 'e.yaml': EXP });
  for (const [a, b] of [
    ['--md', '--csv'],
    ['--csv', '--json'],
    ['--json', '--html'],
  ]) {
    const r = await cli(['report', 'e.yaml', a, b], { cwd: dir });
    assert.is(r.exitCode, 2, `${a} ${b}: ${r.stdout}`);
    assert.match(r.stderr, `option '${a}' cannot be used with option '${b}'`);
    assert.is(r.stdout, '');
  }
});

test('--csv with several tables: one file per table into --out, never one stream with comment lines', async () => {
  const dir = await project();
  const mixed = await cli(['report', 'e.yaml', '--csv'], { cwd: dir });
  assert.is(mixed.exitCode, 2, mixed.stdout);
  assert.match(mixed.stderr, '2 (scores, sizes)');
  assert.match(mixed.stderr, '--out DIR');
  assert.match(mixed.stderr, '--table NAME');
  assert.not.match(mixed.stdout, '#');

  const r = await cli(['report', 'e.yaml', '--csv', '--out', 'csv'], { cwd: dir });
  assert.is(r.exitCode, 0, r.stderr);
  assert.equal(r.stdout.trim().split('\n'), ['csv/scores.csv', 'csv/sizes.csv']);
  assert.equal((await readdir(join(dir, 'csv'))).sort(), ['scores.csv', 'sizes.csv']);
  assert.is(await readFile(join(dir, 'csv', 'scores.csv'), 'utf8'), 'variant,score\nparams.k=1,10\nparams.k=2,20\n');
  assert.is(await readFile(join(dir, 'csv', 'sizes.csv'), 'utf8'), 'variant,size\nparams.k=1,101\nparams.k=2,102\n');
});

test('--table NAME prints that table alone, in any format; an unknown name is refused with a suggestion', async () => {
  const dir = await project();
  const csv = await cli(['report', 'e.yaml', '--csv', '--table', 'sizes'], { cwd: dir });
  assert.is(csv.exitCode, 0, csv.stderr);
  assert.is(csv.stdout.trim(), 'variant,size\nparams.k=1,101\nparams.k=2,102');
  const json = JSON.parse((await cli(['report', 'e.yaml', '--json', '--table', 'scores'], { cwd: dir })).stdout);
  assert.equal(Object.keys(json.tables), ['scores']);
  const md = await cli(['report', 'e.yaml', '--md', '--table', 'sizes'], { cwd: dir });
  assert.match(md.stdout, '### sizes');
  assert.not.match(md.stdout, 'scores');
  const typo = await cli(['report', 'e.yaml', '--table', 'size'], { cwd: dir });
  assert.is(typo.exitCode, 2);
  assert.match(typo.stderr, '--table size: no such table (did you mean "sizes"?) (the tables: scores, sizes)');
  const html = await cli(['report', 'e.yaml', '--html', '--table', 'sizes'], { cwd: dir });
  assert.is(html.exitCode, 2);
  assert.match(html.stderr, '--table picks the table to print');
  const stray = await cli(['report', 'e.yaml', '--md', '--out', 'x'], { cwd: dir });
  assert.is(stray.exitCode, 2);
  assert.match(stray.stderr, 'use it with --html or --csv');
});

test.run();
