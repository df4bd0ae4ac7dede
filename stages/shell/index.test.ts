// The shell stage at run time: declared outputs land inside the node's entry
// or nowhere, even when validation was bypassed or a symlink leads out.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdir, mkdtemp, readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { StageContext } from '../contract.js';
import { shell, type ShellParams } from './index.js';

async function runShell(run: string, outs: string[]) {
  const base = await mkdtemp(join(tmpdir(), 'mlepipe-shell-'));
  const experimentDir = join(base, 'exp');
  const outDir = join(base, 'cache', 'entry');
  const outside = join(base, 'outside');
  for (const d of [experimentDir, outDir, outside]) await mkdir(d, { recursive: true });
  const params: ShellParams = { run, deps: [], outs, env: { OUTSIDE: outside }, params: {} };
  const ctx = {
    node: { id: 'a', name: 'a', key: 'k', variant: {} },
    params,
    experimentDir,
    projectRoot: base,
    cacheRoot: join(base, 'cache'),
    sandbox: { backend: 'process' },
    inputs: [],
    models: {},
    rewards: {},
    outDir,
    items: { root: join(base, 'items') },
    signal: new AbortController().signal,
    log: () => {},
    progress: () => {},
  } as unknown as StageContext<ShellParams>;
  const result = await shell.run(ctx).then(
    () => undefined,
    (err: Error) => err.message,
  );
  return { error: result, outside: await readdir(outside), base: await readdir(base) };
}

test('outs that climb out of the entry are refused at run time too, and nothing is written there', async () => {
  const r = await runShell('mkdir -p up && echo x > up/f', ['../../escaped']);
  assert.match(r.error ?? '', 'outs: ../../escaped leaves the experiment folder');
  assert.equal(r.base.sort(), ['cache', 'exp', 'outside']);
});

test('an out copied under a symlink the command left in $MLEPIPE_OUT does not write through it', async () => {
  const r = await runShell('ln -s "$OUTSIDE" "$MLEPIPE_OUT/a" && mkdir -p a && echo x > a/b', ['a/b']);
  assert.match(r.error ?? '', /outs: a\/b leads outside the node's output folder/);
  assert.equal(r.outside, []);
});

test('declared outputs inside the folder are copied', async () => {
  const r = await runShell('mkdir -p d && echo x > d/f && echo y > top.txt', ['d', 'top.txt']);
  assert.is(r.error, undefined);
});

test.run();
