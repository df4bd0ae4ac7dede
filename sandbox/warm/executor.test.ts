// A warm jail on another machine's engine whose step gets no answer: when that
// engine no longer answers either, the step is the host's loss (HostFault, so
// the run can start again elsewhere), not a failed step charged to the agent.
// The jail here is a real bwrap jail made to look far: its workspace is shared,
// so pushing and pulling have nothing to do, and the engine check is the test's. And the OOM watch of such
// a jail: its server's own count, not the engine's late events.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { cp, mkdir, mkdtemp, readdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HostFault } from '../../core/errors.js';
import { bwrapBackend } from '../backends/bwrap.js';
import { dockerBackend } from '../backends/docker.js';
import { dockerJails } from '../backends/docker-jails.js';
import { jailPython } from '../interpreter.js';
import { bwrapJails, type JailLauncher } from './jail.js';
import { WarmPool } from './pool.js';

function farJails(engineGone: () => boolean): JailLauncher {
  const near = bwrapJails(jailPython('/usr/bin/python3'));
  return {
    kind: near.kind,
    async start(slot, limits, argv) {
      const jail = await near.start(slot, limits, argv);
      return {
        ...jail,
        far: {
          async assign(pub) {
            for (const name of await readdir(pub)) await cp(join(pub, name), join(slot.pub, name), { recursive: true });
          },
          push: async () => {},
          pull: async () => {},
          clear: async () => {},
          async check() {
            if (engineGone()) throw new HostFault('h', 'h: the engine does not answer');
          },
        },
      };
    },
  };
}

/** A session whose first step kills every process in its jail, the server included: the step gets no answer. */
async function serverKilled(engineGone: boolean) {
  const task = await mkdtemp(join(tmpdir(), 'mlepipe-far-'));
  await mkdir(join(task, 'public'));
  const pool = new WarmPool({
    launcher: farJails(() => engineGone),
    python: '/usr/bin/python3',
    modules: [],
    fallback: bwrapBackend(),
    warn: () => {},
    size: 1,
  });
  pool.fill();
  const session = await pool.open({ task });
  try {
    await writeFile(join(session.workspace, 'kill.py'), 'import os, signal\nos.kill(-1, signal.SIGKILL)\n');
    return await session.run({ file: 'kill.py' }).then(
      (r) => ({ result: r }),
      (err: unknown) => ({ error: err }),
    );
  } finally {
    await session.close();
    await pool.shutdown();
  }
}

test('a far jail that stops answering while its engine still answers fails the step, as a jail here would', async () => {
  const got = await serverKilled(false);
  assert.ok('result' in got, String((got as { error?: unknown }).error));
  assert.is(got.result.exitCode, 125);
  assert.match(got.result.stderr, /the warm executor stopped answering/);
});

test("a far jail that stops answering while its engine is silent too throws the host's fault", async () => {
  const got = await serverKilled(true);
  assert.ok('error' in got, 'the step returned a result');
  assert.instance(got.error, HostFault);
  assert.is((got.error as HostFault).host, 'h');
});

// A docker jail treated as another engine's: its server counts its container's OOM kills itself, and the
// engine's OOM events reach the host late. Here every step after the first gets such an event as soon as
// it is watched, as the last step's OOM kill arriving late would: it must not end that step.
test("a far docker jail's server counts its own OOM kills: an engine event arriving late does not end the next step", async () => {
  const real = dockerJails({ remote: true });
  let watched = 0;
  const late: JailLauncher = {
    ...real,
    async start(slot, limits, argv) {
      const jail = await real.start(slot, limits, argv);
      return {
        ...jail,
        watchOom: async (onOom) => {
          if (watched++ > 0) setImmediate(onOom);
          return jail.watchOom(onOom);
        },
      };
    },
  };
  const task = await mkdtemp(join(tmpdir(), 'mlepipe-late-'));
  await mkdir(join(task, 'public'));
  const pool = new WarmPool({
    launcher: late,
    python: '/usr/bin/python3',
    modules: [],
    fallback: dockerBackend({ remote: true }),
    warn: () => {},
    size: 1,
  });
  pool.fill();
  const session = await pool.open({ task });
  try {
    await writeFile(join(session.workspace, 'ok.py'), 'import time\ntime.sleep(0.5)\nprint("done")\n');
    for (let i = 0; i < 2; i++) {
      const r = await session.run({ file: 'ok.py' });
      assert.equal([r.exitCode, r.oom ?? false, r.stdout.trim()], [0, false, 'done'], r.stderr);
    }
  } finally {
    await session.close();
    await pool.shutdown();
  }
});

test.run();
