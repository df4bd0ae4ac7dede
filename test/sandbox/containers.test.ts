// The one container lifecycle (sandbox/containers.ts) on the real engine,
// reached through a loopback proxy that can stop forwarding without closing
// anything: what a cut SSH tunnel or a vanished host looks like from here.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import Docker from 'dockerode';
import { connect, createServer, type Socket } from 'node:net';
import { createContainer, OWNER_LABEL } from '../../sandbox/containers.js';

const IMAGE = 'mlepipe-sandbox:latest';
// The image holds Python and little else, and sets no PATH.
const PY = '/usr/bin/python3';
const SLEEP = [PY, '-c', 'import time; time.sleep(600)'];
const local = new Docker();

/** A proxy to the local engine; `freeze` stops it passing bytes (and new connections) while every socket stays open. */
async function freezableProxy() {
  const sockets = new Set<Socket>();
  let frozen = false;
  const server = createServer((client) => {
    sockets.add(client);
    if (frozen) return;
    const engine = connect('/var/run/docker.sock');
    sockets.add(engine);
    client.pipe(engine).pipe(client);
    for (const s of [client, engine]) s.on('error', () => {});
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    docker: new Docker({ host: '127.0.0.1', port: (server.address() as { port: number }).port, protocol: 'http' }),
    freeze() {
      frozen = true;
      for (const s of sockets) {
        s.unpipe();
        s.pause();
      }
    },
    close() {
      server.close();
      for (const s of sockets) s.destroy();
    },
  };
}

test('create labels the container, attach demuxes stdout from stderr, wait gives the exit code, remove removes it', async () => {
  const c = await createContainer(
    local,
    { Image: IMAGE, Cmd: [PY, '-c', 'import sys; print("out"); print("err", file=sys.stderr); sys.exit(7)'] },
    { reap: true },
  );
  try {
    assert.is((await c.raw.inspect()).Config.Labels[OWNER_LABEL], String(process.pid));
    const io = await c.attach();
    const out: string[] = [];
    const err: string[] = [];
    io.stdout.on('data', (b: Buffer) => out.push(String(b)));
    io.stderr.on('data', (b: Buffer) => err.push(String(b)));
    await c.start();
    assert.is(await c.wait(), 7);
    await io.ended;
    assert.equal([out.join(''), err.join('')], ['out\n', 'err\n']);
  } finally {
    await c.remove();
    await c.remove();
  }
  const left = await local.listContainers({ all: true, filters: { id: [c.id] } });
  assert.is(left.length, 0);
});

test('a wait whose connection goes silent fails saying the engine stopped answering, instead of hanging', async () => {
  const proxy = await freezableProxy();
  const c = await createContainer(proxy.docker, { Image: IMAGE, Cmd: SLEEP }, { reap: true });
  try {
    await c.start();
    const waiting = c.wait({ pingEveryMs: 100 });
    // The path to the engine goes quiet, with no error and no close: the wait's request never gets an answer.
    proxy.freeze();
    const err = await waiting.then(
      (code) => new Error(`the wait ended with exit code ${code}`),
      (e: Error) => e,
    );
    assert.match(err.message, /^the engine stopped answering \(no answer to a ping within 0\.2 s\)$/);
  } finally {
    proxy.close();
    await local.getContainer(c.id).remove({ force: true });
  }
});

test('a wait with a deadline fails at it, naming it', async () => {
  const c = await createContainer(local, { Image: IMAGE, Cmd: SLEEP }, { reap: true });
  try {
    await c.start();
    const err = await c.wait({ timeoutMs: 200 }).then(
      (code) => new Error(`the wait ended with exit code ${code}`),
      (e: Error) => e,
    );
    assert.is(err.message, 'no exit within 0.2 s');
  } finally {
    await c.remove();
  }
});

test.run();
