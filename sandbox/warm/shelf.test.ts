// Warm jails handed from stage to stage within a run: while a run holds the
// shelf open, a pool that shuts down leaves its idle jails there and the next
// pool of the same interpreter and limits takes them, importing what it
// preloads and the jail lacks; a pool of other limits starts its own. Closing
// the shelf closes what is on it. Outside a run, and for an interrupted pool,
// jails close as before. Real bwrap jails over the agent environment.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { envInstalled, pythonEnv } from '../../core/python.js';
import { createSandbox, type Limits } from '../index.js';
import { closeShelf, openShelf, shelved } from './shelf.js';

const AGENT = pythonEnv('agent');

async function taskDir(): Promise<string> {
  const task = await mkdtemp(join(tmpdir(), 'mlepipe-shelf-'));
  await mkdir(join(task, 'public'));
  return task;
}

/** One session in a new pool: the server's process id as its step sees it, which modules it had, and the jail's folder. */
async function oneSession(o: { modules: string[]; limits?: Partial<Limits>; signal?: AbortSignal }) {
  const sandbox = createSandbox({
    backend: 'bwrap',
    warm: true,
    python: AGENT.python,
    poolSize: 1,
    warn: (m) => assert.unreachable(m),
    ...o,
  });
  const session = await sandbox.open({ task: await taskDir() });
  await writeFile(join(session.workspace, 's.py'), "import os, sys; print(os.getppid(), 'sqlite3' in sys.modules)");
  const r = await session.run({ file: 's.py' });
  assert.is(r.exitCode, 0, r.stderr);
  const [server, sqlite] = r.stdout.trim().split(' ');
  await session.close();
  await sandbox.shutdown();
  return { server, sqlite: sqlite === 'True', folder: session.workspace, jails: sandbox.jails() };
}

test('within a run, the next pool alike takes the jail and imports what it lacks; other limits start their own; closing the shelf closes it', async () => {
  assert.ok(envInstalled(AGENT), `the agent environment is not installed: ${AGENT.fix}`);
  openShelf();
  try {
    const first = await oneSession({ modules: ['json'] });
    assert.equal(first.jails, { started: 1, handed: 0, reused: 1 });
    assert.not.ok(first.sqlite);
    assert.is(shelved(), 1, 'the idle jail was kept');
    assert.ok(existsSync(first.folder));

    const second = await oneSession({ modules: ['json', 'sqlite3'] });
    assert.is(second.jails.started, 0);
    assert.is(second.jails.handed, 1);
    assert.is(second.server, first.server, 'the same server');
    assert.is(second.folder, first.folder, 'the same jail');
    assert.ok(second.sqlite, 'the taking pool preloads sqlite3, which the jail imported when taken');

    const other = await oneSession({ modules: ['json'], limits: { memoryMb: 1024 } });
    assert.equal([other.jails.started, other.jails.handed], [1, 0], 'other limits: a jail of its own');
    assert.is(shelved(), 2);
  } finally {
    await closeShelf();
  }
  assert.is(shelved(), 0);
});

test('closing the shelf closes its jails; outside a run, and for an interrupted pool, jails close with their pool', async () => {
  openShelf();
  const kept = await oneSession({ modules: ['json'] });
  assert.ok(existsSync(kept.folder));
  await closeShelf();
  assert.not.ok(existsSync(kept.folder), 'the jail went with the shelf');

  const outside = await oneSession({ modules: ['json'] });
  assert.is(shelved(), 0);
  assert.not.ok(existsSync(outside.folder));

  openShelf();
  try {
    const stop = new AbortController();
    const sandbox = createSandbox({
      backend: 'bwrap',
      warm: true,
      python: AGENT.python,
      poolSize: 1,
      modules: ['json'],
      signal: stop.signal,
      warn: () => {},
    });
    const session = await sandbox.open({ task: await taskDir() });
    await session.close();
    stop.abort();
    await sandbox.shutdown();
    assert.is(shelved(), 0, 'an interrupted stage keeps nothing');
    assert.not.ok(existsSync(session.workspace));
  } finally {
    await closeShelf();
  }
});

test.run();
