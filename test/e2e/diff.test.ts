// `mlepipe diff`: the change as written (with the file or -S argument each side's value came from)
// beside the resolved parameters it lands in and the nodes it touches, in text, Markdown and JSON.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { cli, tmpProject } from '../helpers.js';

const exp = (n: number) => `name: ablation
vars: { n: ${n} }
stages:
  one: { uses: shell, with: { run: 'seq 1 \${vars.n} > $MLEPIPE_OUT/rows.txt' } }
  two: { uses: shell, with: { run: 'echo fixed > $MLEPIPE_OUT/x.txt' } }
`;

const files = { 'three.yaml': exp(3), 'five.yaml': exp(5), 'child.yaml': 'extends: three.yaml\nvars: { n: 5 }\n' };

test('two files that differ only in vars.n: the written change, the resolved run it changes, the node it touches', async () => {
  const dir = await tmpProject(files);
  const r = await cli(['diff', 'three.yaml', 'five.yaml', '--json'], { cwd: dir });
  assert.is(r.exitCode, 0, r.stderr);
  const d = JSON.parse(r.stdout);
  assert.equal(d.written, [{ path: 'vars.n', a: 3, b: 5, at: { a: 'three.yaml:2:12', b: 'five.yaml:2:12' } }]);
  assert.equal(d.params, [
    { path: 'stages.one.with.run', a: 'seq 1 3 > $MLEPIPE_OUT/rows.txt', b: 'seq 1 5 > $MLEPIPE_OUT/rows.txt' },
  ]);
  assert.equal(d.nodes, [
    { id: 'one', status: 'changed' },
    { id: 'two', status: 'same' },
  ]);
  const text = (await cli(['diff', 'three.yaml', 'five.yaml'], { cwd: dir })).stdout;
  assert.match(
    text,
    /^written \(1 differ\)\npath {4}change {2}written at\nvars\.n {2}3 → 5 {3}three\.yaml:2:12 → five\.yaml:2:12\n\nresolved parameters \(1 differ\)\n/m,
  );
  assert.match(text, 'nodes (1 of 2 affected)');
  const md = (await cli(['diff', 'three.yaml', 'five.yaml', '--md'], { cwd: dir })).stdout;
  assert.match(
    md,
    '### written (1 differ)\n| path | change | written at |\n| --- | --- | --- |\n| vars.n | 3 → 5 | three.yaml:2:12 → five.yaml:2:12 |',
  );
  assert.match(md, '| stages.one.with.run | seq 1 3 > $MLEPIPE_OUT/rows.txt | seq 1 5 > $MLEPIPE_OUT/rows.txt |');
});

test('origins: a value inherited through extends names the parent file, one set by -S names the argument', async () => {
  const dir = await tmpProject(files);
  const child = JSON.parse((await cli(['diff', 'three.yaml', 'child.yaml', '--json'], { cwd: dir })).stdout);
  assert.equal(child.written, [{ path: 'vars.n', a: 3, b: 5, at: { a: 'three.yaml:2:12', b: 'child.yaml:2:12' } }]);
  // The child changes nothing else, and the extends: key itself is not a value of the experiment.
  assert.equal(
    child.params.map((p: { path: string }) => p.path),
    ['stages.one.with.run'],
  );
  const set = await cli(['diff', 'child.yaml', 'child.yaml', '-S', 'vars.n=7'], { cwd: dir });
  assert.is(set.exitCode, 0, set.stderr);
  assert.match(set.stdout, /^vars\.n {2}5 → 7 {3}child\.yaml:2:12 → -S vars\.n=7$/m);
  const same = JSON.parse((await cli(['diff', 'child.yaml', 'five.yaml', '--json'], { cwd: dir })).stdout);
  // Resolved alike, so no node changes; written alike too, wherever each value came from.
  assert.equal(
    [same.written, same.params, same.nodes.map((n: { status: string }) => n.status)],
    [[], [], ['same', 'same']],
  );
});

test.run();
