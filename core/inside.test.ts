import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdir, mkdtemp, realpath, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { OutsideError, pathProblem, resolveInside } from './inside.js';

test('pathProblem: absolute, climbing out, the folder itself; inside is fine', () => {
  assert.is(pathProblem('/etc/passwd'), 'absolute');
  assert.is(pathProblem('../x'), 'outside');
  assert.is(pathProblem('a/../../x'), 'outside');
  assert.is(pathProblem('..'), 'outside');
  assert.is(pathProblem('.'), 'itself');
  assert.is(pathProblem(''), 'itself');
  assert.is(pathProblem('a/..'), 'itself');
  assert.is(pathProblem('a/../b'), undefined);
  assert.is(pathProblem('..a/b'), undefined);
  assert.is(pathProblem('out/file.txt'), undefined);
});

test('resolveInside: a path inside, existing or not, resolves under the root', async () => {
  const root = await realpath(await mkdtemp(join(tmpdir(), 'mlepipe-inside-')));
  assert.is(await resolveInside(root, 'a/b.txt'), join(root, 'a/b.txt'));
  await mkdir(join(root, 'sub'));
  await symlink(join(root, 'sub'), join(root, 'here'));
  assert.is(await resolveInside(root, 'here/x'), join(root, 'here/x'));
});

test('resolveInside: refuses .., absolute paths and symlinks that lead out', async () => {
  const root = await mkdtemp(join(tmpdir(), 'mlepipe-inside-'));
  const outside = await mkdtemp(join(tmpdir(), 'mlepipe-outside-'));
  await symlink(outside, join(root, 'link'));
  // A write to a dangling link creates its target.
  await symlink(join(outside, 'not-yet'), join(root, 'dangling'));
  for (const rel of ['../x', '/tmp/x', 'link', 'link/deeper/x', '.', 'dangling', 'dangling/x']) {
    try {
      await resolveInside(root, rel);
      assert.unreachable(`${rel} should be refused`);
    } catch (err) {
      assert.instance(err, OutsideError, String(err));
    }
  }
});

test.run();
