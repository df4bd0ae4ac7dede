// A Ray job that goes silent (a rollout server that died under verl's weight sync left the trainer waiting
// without end) is stopped after stallS seconds without a line of log, and the run fails saying so, instead of
// waiting forever. The head is one started here, with a token of its own: nothing but mlepipe's own calls,
// which carry it, reach its job server.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runJob, startLocalHead } from '../../gpu/verl/job.js';

test('a job that prints nothing for stallS seconds is stopped, and the run fails with the reason', async () => {
  const head = await startLocalHead({ cpus: 2, log: () => {} });
  try {
    const exportDir = await mkdtemp(join(tmpdir(), 'stall-'));
    // The job's "interpreter": says one line, then waits in silence (ignoring the entrypoint's arguments).
    const sleeper = join(exportDir, 'sleeper.sh');
    await writeFile(sleeper, '#!/bin/sh\necho waiting on the rollout servers\nexec sleep 600\n', { mode: 0o755 });
    const lines: string[] = [];
    let err: Error | undefined;
    await runJob({
      exportDir,
      resultsDir: exportDir,
      address: head.address,
      auth: { token: head.token },
      overrides: [],
      python: sleeper,
      stallS: 8,
      record: async () => {},
      log: (l) => lines.push(l),
      signal: new AbortController().signal,
    }).catch((e: Error) => (err = e));
    assert.ok(err, 'the run failed');
    assert.match(err!.message, /printed nothing for 8 s and was stopped/);
    assert.ok(
      lines.some((l) => l.includes('waiting on the rollout servers')),
      lines.join('\n'),
    );
  } finally {
    await head.stop();
  }
});

test.run();
