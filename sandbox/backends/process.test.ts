import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdir, mkdtemp, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { waitFor } from '../../test/helpers.js';
import { createSandbox } from '../index.js';

async function task(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'mlepipe-proc-'));
  await mkdir(join(dir, 'public'));
  return dir;
}

test('the process backend ends a memory hog as out of memory, and an interrupt stops its step', async () => {
  const t = await task();
  const ac = new AbortController();
  const sb = createSandbox({ backend: 'process', explicit: true, warn: () => {} });
  const s = await sb.open({ task: t, limits: { memoryMb: 256 }, signal: ac.signal });
  try {
    await writeFile(
      join(s.workspace, 'hog.py'),
      'b = []\nwhile True:\n    b.append(bytearray(32 * 1024 * 1024))\n    b[-1][::4096] = b"x" * len(b[-1][::4096])\n',
    );
    const hog = await s.run({ file: 'hog.py' }, { timeoutMs: 60_000 });
    assert.equal([hog.oom, hog.timedOut], [true, false], hog.stderr);
    assert.match(hog.stderr, 'ran out of memory');
    await writeFile(join(s.workspace, 'slow.py'), 'import time\nopen("started", "w").close()\ntime.sleep(600)\n');
    const slow = s.run({ file: 'slow.py' }, { timeoutMs: 600_000 });
    await waitFor(
      () =>
        stat(join(s.workspace, 'started')).then(
          () => true,
          () => false,
        ),
      30_000,
      'the step to start',
    );
    ac.abort();
    const r = await slow;
    assert.equal([r.interrupted, r.timedOut, r.exitCode], [true, false, 130], r.stderr);
  } finally {
    await s.close();
  }
});

test.run();
