import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { lstat, mkdir, mkdtemp, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { linkTree } from './fs.js';

test('linkTree: the same tree, each file a link to the original, a symbolic link kept as one', async () => {
  const root = await mkdtemp(join(tmpdir(), 'mlepipe-link-'));
  try {
    const src = join(root, 'src');
    await mkdir(join(src, 'images', 'a'), { recursive: true });
    await writeFile(join(src, 'train.csv'), 'id,y\n1,0\n');
    await writeFile(join(src, 'images', 'a', '0.png'), 'png');
    await symlink('train.csv', join(src, 'alias.csv'));
    const dst = join(root, 'dst');
    await linkTree(src, dst);
    for (const f of ['train.csv', 'images/a/0.png']) {
      const [a, b] = [await stat(join(src, f)), await stat(join(dst, f))];
      assert.is(b.ino, a.ino, f);
      assert.is(b.nlink, 2, f);
    }
    assert.ok((await lstat(join(dst, 'alias.csv'))).isSymbolicLink());
    assert.is(await readFile(join(dst, 'alias.csv'), 'utf8'), 'id,y\n1,0\n');
    // Removing the view leaves the originals.
    await rm(dst, { recursive: true });
    assert.is(await readFile(join(src, 'images', 'a', '0.png'), 'utf8'), 'png');
  } finally {
    await rm(root, { recursive: true, force: true });
  }
});

test.run();
