// What a validation message says beside where it points: one error per mistake, and a way out of it.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { loadProblems } from '../../test/diagnostics.js';
import { suggestion, typoDistance } from '../../core/suggest.js';

const GEN = '  g: { uses: generate, with: { seeds: mlebench, count: 2 } }\n';

test('an empty matrix is one error, not also a missing one', async () => {
  const e = await loadProblems(`name: e\nstages:\n${GEN}  ab: { uses: ablate, target: g, matrix: {} }\n`);
  assert.equal(e, ['4:42 stages.ab.matrix: must not be empty']);
  const empty = await loadProblems(
    `name: e\nstages:\n${GEN}  ab: { uses: ablate, target: g, matrix: { count: [] } }\n`,
  );
  assert.equal(empty, ['4:51 stages.ab.matrix.count: must not be empty (give at least one item)']);
});

test('a misspelled matrix is the unknown key with its suggestion, not also a missing matrix', async () => {
  const e = await loadProblems(`name: e\nstages:\n${GEN}  ab: { uses: ablate, target: g, matirx: { count: [1] } }\n`);
  assert.equal(e, ['4:34 stages.ab.matirx: unknown key (did you mean "matrix"?)']);
  // A matrix left out altogether is still missing.
  assert.equal(await loadProblems(`name: e\nstages:\n${GEN}  ab: { uses: ablate, target: g }\n`), [
    '4:3 stages.ab: missing required key "matrix"',
  ]);
});

test('a misspelled reward variable and reward name get a suggestion', async () => {
  const e = await loadProblems(
    'name: e\nrewards:\n  main: glod + 0.1 * valid\nstages:\n  a: { uses: shell, with: { run: x, reward: mien } }\n',
  );
  assert.equal(e.length, 2, e.join('\n'));
  assert.match(e[0], /^3:9 rewards\.main: unknown variable "glod" \(did you mean "gold"\?\) \(known: /);
  assert.is(
    e[1],
    '5:45 stages.a.with.reward: undefined reward "mien" (not in rewards: or the presets) (did you mean "main"?)',
  );
});

test('suggestions: a swap of two letters is one slip; two slips only in a name nothing else is as near', () => {
  assert.is(typoDistance('glod', 'gold'), 1);
  assert.is(typoDistance('mien', 'main'), 2);
  assert.is(typoDistance('', 'abc'), 3);
  assert.is(suggestion('glod', ['score', 'gold', 'silver']), ' (did you mean "gold"?)');
  assert.is(suggestion('mien', ['main', 'dense', 'sparse']), ' (did you mean "main"?)');
  // Two names as near: no guess; another first letter: no guess; short names: no guess.
  assert.is(suggestion('mien', ['main', 'mean']), '');
  assert.is(suggestion('kien', ['main']), '');
  assert.is(suggestion('ab', ['ba', 'xy']), ' (did you mean "ba"?)');
  assert.is(suggestion('abc', ['xyz']), '');
});

test('one value where a list goes says how to write the list', async () => {
  const e = await loadProblems(
    'name: e\nstages:\n  a: { uses: shell, with: { run: x, outs: out.txt } }\n  b: { uses: shell, needs: a, with: { run: x } }\n',
  );
  assert.equal(e, [
    '3:43 stages.a.with.outs: must be array (a list: write [out.txt] for one item, or one "- item" line per item)',
    '4:28 stages.b.needs: must be array (a list: write [a] for one item, or one "- item" line per item)',
  ]);
  const q = await loadProblems('name: e\nstages:\n  a: { uses: shell, with: { run: x, outs: "a, b" } }\n');
  assert.equal(q, [
    '3:43 stages.a.with.outs: must be array (a list: write ["a, b"] for one item, or one "- item" line per item)',
  ]);
});

test.run();
