// A worker started for a node: ready once it listens and answers /health,
// its output in the node's log, gone when stopped; a worker that cannot start
// says why.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pidAlive } from '../../core/proc.js';
import { envInstalled, pythonEnv } from '../../core/python.js';
import { startLocalWorker, trainerPython } from './local.js';

const trainer = pythonEnv('trainer');

test('a tiny worker starts, answers, and is gone once stopped', async () => {
  assert.ok(envInstalled(trainer), `the trainer environment is not installed: ${trainer.fix}`);
  const ckpt = await mkdtemp(join(tmpdir(), 'mlepipe-local-worker-'));
  const lines: string[] = [];
  try {
    const w = await startLocalWorker({ model: { tiny: true }, ckptDir: ckpt, threads: 1, log: (l) => lines.push(l) });
    assert.match(w.url, /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.is(w.health.status, 'ok');
    assert.is(w.health.step, 0);
    assert.ok(
      lines.some((l) => l.startsWith('mlepipe-worker listening on')),
      lines.join('\n'),
    );
    const saved = await w.client.save(0, 'first');
    assert.ok(saved.path.startsWith(ckpt), saved.path);
    const pid = await findWorkerPid(w.url);
    assert.ok(pid, 'something listens on the worker port');
    await w.stop();
    assert.not.ok(pidAlive(pid!), 'the worker process is gone');
    const after = await fetch(`${w.url}/health`).then(
      () => 'answered',
      () => 'refused',
    );
    assert.is(after, 'refused');
  } finally {
    await rm(ckpt, { recursive: true, force: true });
  }
});

test('a worker that cannot start says why, with its last lines', async () => {
  const ckpt = await mkdtemp(join(tmpdir(), 'mlepipe-local-worker-'));
  try {
    const err = await startLocalWorker({
      model: { tiny: true },
      ckptDir: ckpt,
      args: ['--lora-rank', 'many'],
      log: () => {},
    }).then(
      () => undefined,
      (e: Error) => e,
    );
    assert.ok(err);
    assert.match(err!.message, 'exited before it was ready');
    assert.match(err!.message, '--lora-rank');
    const missing = await startLocalWorker({ model: { dir: join(ckpt, 'nope') }, ckptDir: ckpt, log: () => {} }).then(
      () => undefined,
      (e: Error) => e,
    );
    assert.match(missing!.message, 'does not exist');
  } finally {
    await rm(ckpt, { recursive: true, force: true });
  }
});

/** The pid of the process listening on the worker's port. */
async function findWorkerPid(url: string): Promise<number | undefined> {
  const { execa } = await import('execa');
  const r = await execa('ss', ['-ltnpH', `sport = :${new URL(url).port}`], { reject: false });
  const m = /pid=(\d+)/.exec(String(r.stdout));
  return m ? Number(m[1]) : undefined;
}

test("MLEPIPE_TRAINER_PYTHON names the interpreter instead of the trainer environment (a GPU host's own)", () => {
  assert.is(trainerPython(undefined, { MLEPIPE_TRAINER_PYTHON: trainer.python }), trainer.python);
  assert.throws(
    () => trainerPython(undefined, { MLEPIPE_TRAINER_PYTHON: '/nowhere/python' }),
    /MLEPIPE_TRAINER_PYTHON=\/nowhere\/python: no such interpreter/,
  );
});

test.run();
