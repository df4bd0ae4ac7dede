import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdir, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { waitFor } from '../../test/helpers.js';
import { bwrapBackend } from '../backends/bwrap.js';
import type { JailLauncher } from './jail.js';
import { WarmPool } from './pool.js';

async function task(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'mlepipe-pool-'));
  await mkdir(join(dir, 'public'));
  return dir;
}

/** A jail whose server never says it is ready, counting starts and stops. */
function silentJails(): JailLauncher & { started: number; stopped: number } {
  const l = {
    kind: 'warm-bwrap' as const,
    started: 0,
    stopped: 0,
    async start() {
      l.started++;
      const stdout = new PassThrough();
      return {
        stdin: new PassThrough(),
        stdout,
        stderr: new PassThrough(),
        exited: new Promise<void>(() => {}),
        countsProcesses: true,
        watchOom: async () => () => {},
        async stop() {
          l.stopped++;
          stdout.end();
        },
      };
    },
  };
  return l;
}

test('shutting a pool down stops the jails still starting instead of waiting for them', async () => {
  const jails = silentJails();
  const warnings: string[] = [];
  const pool = new WarmPool({
    launcher: jails,
    python: '/usr/bin/python3',
    fallback: bwrapBackend(),
    warn: (m) => warnings.push(m),
    size: 2,
  });
  pool.fill();
  await waitFor(() => jails.started === 2, 10_000, 'two jails to start');
  await pool.shutdown();
  assert.is(jails.stopped, 2);
  assert.equal(warnings, [], 'stopped, not failed');
});

test("a pool given the run's signal stops its jails as soon as it aborts", async () => {
  const jails = silentJails();
  const ac = new AbortController();
  const pool = new WarmPool({
    launcher: jails,
    python: '/usr/bin/python3',
    fallback: bwrapBackend(),
    warn: () => {},
    size: 2,
    signal: ac.signal,
  });
  pool.fill();
  await waitFor(() => jails.started === 2, 10_000, 'two jails to start');
  ac.abort();
  await waitFor(() => jails.stopped === 2, 10_000, 'both jails to stop');
  await pool.shutdown();
  assert.is(jails.stopped, 2, 'once');
});

test('opening a warm session gives up waiting for a jail when its signal aborts', async () => {
  const jails = silentJails();
  const pool = new WarmPool({
    launcher: jails,
    python: '/usr/bin/python3',
    fallback: bwrapBackend(),
    warn: () => {},
    size: 0,
  });
  const ac = new AbortController();
  const opening = pool.open({ task: await task(), signal: ac.signal });
  await waitFor(() => jails.started === 1, 10_000, 'a jail to start');
  ac.abort();
  await opening.then(
    () => assert.unreachable('opened'),
    (err: Error) => assert.is(err.name, 'AbortError'),
  );
  await pool.shutdown();
  assert.is(jails.stopped, 1);
});

test.run();
