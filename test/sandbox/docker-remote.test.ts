// The docker backend against an engine it must treat as remote (DOCKER_HOST
// over TCP, here a loopback proxy to the local engine's socket): the
// workspace travels as tar archives, not bind mounts.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import Docker from 'dockerode';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { connect, createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dockerBackend, engineIsLocal } from '../../sandbox/backends/docker.js';
import { createSandbox } from '../../sandbox/index.js';
import { pythonEnv } from '../../core/python.js';

let proxy: Server;
let port = 0;

test.before(async () => {
  proxy = createServer((client) => {
    const engine = connect('/var/run/docker.sock');
    client.pipe(engine).pipe(client);
    const end = () => {
      client.destroy();
      engine.destroy();
    };
    client.on('error', end);
    engine.on('error', end);
  });
  await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', () => r()));
  port = (proxy.address() as { port: number }).port;
});

test.after(() => {
  proxy.close();
});

test('a remote engine gets the workspace and public/ as archives, and the results come back', async () => {
  const task = await mkdtemp(join(tmpdir(), 'mlepipe-remote-'));
  await mkdir(join(task, 'public'));
  await writeFile(join(task, 'public', 'train.csv'), 'id,y\n1,0\n2,1\n');
  const saved = process.env.DOCKER_HOST;
  process.env.DOCKER_HOST = `tcp://127.0.0.1:${port}`;
  try {
    assert.is(engineIsLocal(), false);
    const backend = dockerBackend({ docker: new Docker({ host: '127.0.0.1', port, protocol: 'http' }) });
    const s = await backend.open({ task });
    try {
      await writeFile(join(s.workspace, 'notes.txt'), 'from the host');
      await writeFile(
        join(s.workspace, 'step.py'),
        [
          'import os',
          'rows = open("public/train.csv").read().splitlines()',
          'print(len(rows), open("notes.txt").read())',
          'open("submission.csv", "w").write("id,y\\n1,0\\n")',
          'try:',
          '    open("public/train.csv", "a").write("x")',
          '    print("public writable")',
          'except OSError as e:',
          '    print("public read-only", type(e).__name__)',
        ].join('\n'),
      );
      const r = await s.run({ file: 'step.py' });
      assert.is(r.exitCode, 0, r.stderr);
      assert.is(r.stdout, '3 from the host\npublic read-only PermissionError\n');
      assert.is(await readFile(join(s.workspace, 'submission.csv'), 'utf8'), 'id,y\n1,0\n');
      assert.is(await readFile(join(task, 'public', 'train.csv'), 'utf8'), 'id,y\n1,0\n2,1\n');
    } finally {
      await s.close();
    }
  } finally {
    if (saved === undefined) delete process.env.DOCKER_HOST;
    else process.env.DOCKER_HOST = saved;
  }
});

test("a warm jail on a remote engine keeps its workspace in step with this machine's, deletions both ways, and reads public/ from the engine's task store", async () => {
  const task = await mkdtemp(join(tmpdir(), 'mlepipe-remote-'));
  await mkdir(join(task, 'public'));
  await writeFile(join(task, 'public', 'train.csv'), 'id,y\n1,0\n');
  const where = `tcp://127.0.0.1:${port}`;
  const sandbox = createSandbox({
    backend: 'docker',
    warm: true,
    poolSize: 1,
    python: pythonEnv('agent').python,
    modules: ['json'],
    engine: { client: async () => new Docker({ host: '127.0.0.1', port, protocol: 'http' }), where },
  });
  try {
    const s = await sandbox.open({ task });
    try {
      assert.is(s.backend, 'warm-docker');
      const run = async (code: string) => {
        await writeFile(join(s.workspace, 'step.py'), code);
        const r = await s.run({ file: 'step.py' });
        assert.is(r.exitCode, 0, r.stderr);
        return r.stdout.trim();
      };
      // The task's files are the store's, behind the public link, read-only.
      assert.match(
        await run('import os\nprint(os.path.realpath("public"), open("public/train.csv").read().count("\\n"))'),
        /^\/mlepipe-tasks\/[0-9a-f]{64} 2$/,
      );
      assert.is(
        await run(
          'import os\nos.makedirs("d", exist_ok=True)\nfor n in ["a.txt", "b.txt", "d/c.txt"]: open(n, "w").write(n)\nprint("ok")',
        ),
        'ok',
      );
      assert.is(await readFile(join(s.workspace, 'd', 'c.txt'), 'utf8'), 'd/c.txt');
      // Deleted here: gone there. Changed here: changed there.
      await rm(join(s.workspace, 'a.txt'));
      await writeFile(join(s.workspace, 'b.txt'), 'changed here');
      assert.is(
        await run('import os\nprint(sorted(os.listdir(".")), open("b.txt").read())'),
        "['b.txt', 'd', 'public', 'step.py'] changed here",
      );
      // Deleted there: gone here, folders with it.
      assert.is(await run('import os, shutil\nos.remove("b.txt")\nshutil.rmtree("d")\nprint("ok")'), 'ok');
      assert.equal((await readdir(s.workspace)).sort(), ['public', 'step.py']);
    } finally {
      await s.close();
    }
  } finally {
    await sandbox.shutdown();
  }
});

/** A proxy to the local engine that passes an event stream's response headers but none of its events, as a slow engine would deliver them too late. */
async function mutedEvents(): Promise<Server> {
  const server = createServer((client) => {
    const engine = connect('/var/run/docker.sock');
    // Connections are kept alive: the event stream's request may follow others on the same one (it is the last).
    let events = false;
    let headersSent = false;
    client.on('data', (chunk: Buffer) => (events ||= /^GET \S*\/events/.test(chunk.toString('latin1', 0, 200))));
    client.pipe(engine);
    engine.on('data', (chunk: Buffer) => {
      if (events && headersSent) return;
      if (events) headersSent = true;
      client.write(chunk);
    });
    const end = () => {
      client.destroy();
      engine.destroy();
    };
    client.on('error', end);
    engine.on('error', end);
    client.on('close', end);
    engine.on('close', end);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return server;
}

test("a warm jail on a remote engine ends a step at its memory cap from its own cgroup's count, with the engine's OOM events never arriving", async () => {
  const muted = await mutedEvents();
  const mport = (muted.address() as { port: number }).port;
  const task = await mkdtemp(join(tmpdir(), 'mlepipe-remote-'));
  await mkdir(join(task, 'public'));
  const sandbox = createSandbox({
    backend: 'docker',
    warm: true,
    poolSize: 1,
    python: pythonEnv('agent').python,
    modules: ['json'],
    limits: { memoryMb: 1024 },
    engine: {
      client: async () => new Docker({ host: '127.0.0.1', port: mport, protocol: 'http' }),
      where: `tcp://127.0.0.1:${mport}`,
    },
  });
  try {
    const s = await sandbox.open({ task });
    try {
      // Four processes of 700 MB each under a 1 GB cap: one is killed, and the others would sleep out the timeout.
      await writeFile(
        join(s.workspace, 'hogs.py'),
        'import os, time\nfor i in range(4):\n    if os.fork() == 0:\n        b = bytearray(700 * 1024 * 1024)\n        b[::4096] = b"x" * len(b[::4096])\n        time.sleep(600)\n        os._exit(0)\ntime.sleep(600)\n',
      );
      const r = await s.run({ file: 'hogs.py' }, { timeoutMs: 60_000 });
      assert.is(r.oom, true, `${r.exitCode} ${r.stderr.slice(-300)}`);
      assert.is(r.timedOut, false, 'ended at the memory cap, not at the timeout');
    } finally {
      await s.close();
    }
  } finally {
    await sandbox.shutdown();
    muted.close();
  }
});

test.run();
