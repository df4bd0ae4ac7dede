// `mlepipe serve` through the built CLI: a checkpoint a worker saved is
// served in the foreground, answers an OpenAI client, and is gone after
// SIGTERM; a CHECKPOINT that is not a folder is a clear error.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import OpenAI from 'openai';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startLocalWorker } from '../../gpu/trainer/local.js';
import { cli, cliStart, waitFor } from '../helpers.js';

test('serve answers an OpenAI client on a saved checkpoint and stops on SIGTERM', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'mlepipe-serve-test-'));
  try {
    const w = await startLocalWorker({
      model: { tiny: true, seed: 2 },
      ckptDir: join(dir, 'ck'),
      threads: 1,
      log: () => {},
    });
    const saved = await w.client.save(0, 'tiny');
    await w.stop();

    const child = cliStart(['serve', saved.path, '--port', '0', '--threads', '1'], { cwd: dir });
    let stdout = '';
    child.stdout!.on('data', (b: Buffer) => (stdout += b.toString()));
    await waitFor(() => /OpenAI base URL: (\S+)\/v1/.test(stdout) || child.exitCode !== null, 300_000, 'the base URL');
    const base = /OpenAI base URL: (\S+\/v1)/.exec(stdout)?.[1];
    assert.ok(base, stdout);
    assert.match(stdout, `serving ${saved.path}`);
    const client = new OpenAI({ baseURL: base, apiKey: 'none' });
    const r = await client.chat.completions.create({
      model: 'tiny',
      messages: [{ role: 'user', content: 'the agent reads the csv' }],
      max_tokens: 4,
      seed: 1,
    });
    assert.is(r.choices.length, 1);

    child.kill('SIGTERM');
    const done = await child;
    assert.is(done.exitCode, 0, String(done.stderr));
    const after = await fetch(`${base!.replace(/\/v1$/, '')}/health`).then(
      () => 'answered',
      () => 'refused',
    );
    assert.is(after, 'refused');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('serve refuses a CHECKPOINT that is not a folder, without a stack trace', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'mlepipe-serve-test-'));
  try {
    await writeFile(join(dir, 'weights.bin'), 'x');
    const file = await cli(['serve', 'weights.bin'], { cwd: dir });
    assert.is(file.exitCode, 2, file.stderr);
    assert.match(file.stderr, /^weights\.bin: not a folder/);
    const missing = await cli(['serve', 'nope'], { cwd: dir });
    assert.is(missing.exitCode, 2);
    assert.match(missing.stderr, /^nope: no such folder/);
    const port = await cli(['serve', '.', '--port', 'x'], { cwd: dir });
    assert.is(port.exitCode, 2);
    assert.match(port.stderr, /--port x: must be an integer/);
    for (const r of [file, missing, port]) assert.not.match(r.stderr, /\n\s+at /);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test.run();
