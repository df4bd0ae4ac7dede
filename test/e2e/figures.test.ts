// Figures are drawn again only when what they show changes: the spec with its
// rows is hashed and recorded beside the SVG.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { cli, tmpProject } from '../helpers.js';

const EXP = `name: figs
vars: { k: 2 }
stages:
  train:
    uses: shell
    with:
      run: |
        lr=$(echo "$MLEPIPE_PARAMS" | sed 's/.*"lr":\\([0-9]*\\).*/\\1/')
        printf '{"score": %d}' $(( lr * \${vars.k} )) > $MLEPIPE_OUT/metrics.json
      params: { lr: 1 }
  lrs: { uses: ablate, target: train, matrix: { params.lr: [1, 3] } }
figures:
  score: { from: train, x: variant, y: score }
`;

const svgOf = (dir: string) => join(dir, 'reports', 'figs', 'score.svg');
// The file is replaced by rename when it is written, so a new inode means it was written again.
const inode = async (dir: string) => (await stat(svgOf(dir))).ino;

test('an unchanged figure is not drawn again; new data, a removed or an edited SVG is', async () => {
  const dir = await tmpProject({ 'e.yaml': EXP });
  const first = await cli(['run', 'e.yaml'], { cwd: dir });
  assert.is(first.exitCode, 0, first.stderr);
  assert.match(first.stderr, /figure score: reports\/figs\/score\.svg/);
  const drawn = await readFile(svgOf(dir), 'utf8');
  assert.match(drawn, /<svg/);
  const stamp = JSON.parse(await readFile(`${svgOf(dir)}.inputs.json`, 'utf8'));
  assert.type(stamp.inputs, 'string');
  const ino = await inode(dir);

  // All cached: the same rows, so the same figure, left as it is.
  const again = await cli(['run', 'e.yaml'], { cwd: dir });
  assert.is(again.exitCode, 0, again.stderr);
  assert.match(again.stderr, /figure score: reports\/figs\/score\.svg/);
  assert.is(await inode(dir), ino);
  assert.is((await cli(['report', 'e.yaml'], { cwd: dir })).exitCode, 0);
  assert.is(await inode(dir), ino);

  // Other data: drawn again, with the new values.
  const changed = await cli(['run', 'e.yaml', '-S', 'vars.k=5'], { cwd: dir });
  assert.is(changed.exitCode, 0, changed.stderr);
  assert.is.not(await inode(dir), ino);
  const redrawn = await readFile(svgOf(dir), 'utf8');
  assert.is.not(redrawn, drawn);
  assert.is.not(JSON.parse(await readFile(`${svgOf(dir)}.inputs.json`, 'utf8')).inputs, stamp.inputs);

  // Removed or edited by hand: drawn again even though the data did not change.
  await rm(svgOf(dir));
  assert.is((await cli(['report', 'e.yaml', '-S', 'vars.k=5'], { cwd: dir })).exitCode, 0);
  assert.is(await readFile(svgOf(dir), 'utf8'), redrawn);
  await writeFile(svgOf(dir), '<svg>edited</svg>');
  assert.is((await cli(['report', 'e.yaml', '-S', 'vars.k=5'], { cwd: dir })).exitCode, 0);
  assert.is(await readFile(svgOf(dir), 'utf8'), redrawn);
});

test.run();
